"""Layer classes of ``ptcore.nn`` (re-exported by ``ptcore.nn``)."""
from ptcore.nn.modules.module import Module  # noqa: F401
from ptcore.nn.modules.container import (  # noqa: F401
    Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict,
)
from ptcore.nn.modules.distance import PairwiseDistance, CosineSimilarity  # noqa: F401
from ptcore.nn.modules.loss import (  # noqa: F401
    L1Loss, NLLLoss, NLLLoss2d, PoissonNLLLoss, GaussianNLLLoss, KLDivLoss, MSELoss, BCELoss,
    BCEWithLogitsLoss, HingeEmbeddingLoss, MultiLabelMarginLoss, SmoothL1Loss, HuberLoss,
    SoftMarginLoss, CrossEntropyLoss, MultiLabelSoftMarginLoss, CosineEmbeddingLoss,
    MarginRankingLoss, MultiMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss,
)
from ptcore.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d  # noqa: F401
from ptcore.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: F401
from ptcore.nn.modules.normalization import LocalResponseNorm, LayerNorm, GroupNorm, RMSNorm  # noqa: F401
