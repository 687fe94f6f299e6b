"""Layer classes of ``ptcore.nn`` (re-exported by ``ptcore.nn``)."""
from ptcore.nn.modules.module import (  # noqa: F401
    Module, register_module_forward_pre_hook, register_module_forward_hook,
    register_module_full_backward_pre_hook, register_module_full_backward_hook,
)
from ptcore.nn.modules.container import (  # noqa: F401
    Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict,
)
from ptcore.nn.modules.linear import Identity, Linear, Bilinear  # noqa: F401
from ptcore.nn.modules.activation import (  # noqa: F401
    Threshold, ReLU, RReLU, Hardtanh, ReLU6, Sigmoid, Hardsigmoid, Tanh, SiLU, Mish, Hardswish,
    ELU, CELU, SELU, GLU, GELU, Hardshrink, LeakyReLU, LogSigmoid, Softplus, Softshrink, PReLU,
    Softsign, Tanhshrink, Softmin, Softmax, Softmax2d, LogSoftmax,
)
from ptcore.nn.modules.dropout import (  # noqa: F401
    Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout,
)
from ptcore.nn.modules.flatten import Flatten, Unflatten  # noqa: F401
from ptcore.nn.modules.sparse import Embedding  # noqa: F401
from ptcore.nn.modules.conv import (  # noqa: F401
    Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d,
)
from ptcore.nn.modules.pooling import (  # noqa: F401
    MaxPool1d, MaxPool2d, MaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d, AdaptiveAvgPool1d,
    AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d,
    LPPool1d, LPPool2d, LPPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d,
)
from ptcore.nn.modules.fold import Fold, Unfold  # noqa: F401
from ptcore.nn.modules.channelshuffle import ChannelShuffle  # noqa: F401
from ptcore.nn.modules.pixelshuffle import PixelShuffle, PixelUnshuffle  # noqa: F401
from ptcore.nn.modules.upsampling import (  # noqa: F401
    Upsample, UpsamplingNearest2d, UpsamplingBilinear2d,
)
from ptcore.nn.modules.padding import (  # noqa: F401
    ZeroPad1d, ZeroPad2d, ZeroPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d,
    ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d,
    ReplicationPad3d, CircularPad1d, CircularPad2d, CircularPad3d,
)
from ptcore.nn.modules.rnn import (  # noqa: F401
    RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell,
)
from ptcore.nn.modules.sparse_bag import EmbeddingBag  # noqa: F401
from ptcore.nn.modules.distance import PairwiseDistance, CosineSimilarity  # noqa: F401
from ptcore.nn.modules.loss import (  # noqa: F401
    L1Loss, NLLLoss, NLLLoss2d, PoissonNLLLoss, GaussianNLLLoss, KLDivLoss, MSELoss, BCELoss,
    BCEWithLogitsLoss, HingeEmbeddingLoss, MultiLabelMarginLoss, SmoothL1Loss, HuberLoss,
    SoftMarginLoss, CrossEntropyLoss, MultiLabelSoftMarginLoss, CosineEmbeddingLoss,
    MarginRankingLoss, MultiMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss, CTCLoss,
)
from ptcore.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d  # noqa: F401
from ptcore.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: F401
from ptcore.nn.modules.normalization import LocalResponseNorm, LayerNorm, GroupNorm, RMSNorm  # noqa: F401
from ptcore.nn.modules.attention import MultiheadAttention  # noqa: F401
from ptcore.nn.modules.transformer import (  # noqa: F401
    Transformer, TransformerEncoder, TransformerDecoder, TransformerEncoderLayer,
    TransformerDecoderLayer,
)
from ptcore.nn.modules.lazy import LazyModuleMixin  # noqa: F401
from ptcore.nn.modules.linear import LazyLinear  # noqa: F401
from ptcore.nn.modules.conv import (  # noqa: F401
    LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d,
    LazyConvTranspose3d,
)
from ptcore.nn.modules.batchnorm import (  # noqa: F401
    LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, SyncBatchNorm,
)
from ptcore.nn.modules.instancenorm import (  # noqa: F401
    LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d,
)
from ptcore.nn.modules.pooling import FractionalMaxPool2d, FractionalMaxPool3d  # noqa: F401
from ptcore.nn.modules.adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: F401
from ptcore.nn.modules.normalization import CrossMapLRN2d  # noqa: F401
from ptcore.nn.modules.loss import LinearCrossEntropyLoss  # noqa: F401,E402
from ptcore.nn.modules.linear_cross_entropy_options import LinearCrossEntropyOptions  # noqa: F401,E402

# torch's star-export: the layer classes (and the options of LinearCrossEntropyLoss)
__all__ = sorted([_n for _n, _v in list(globals().items())
                  if isinstance(_v, type) and issubclass(_v, Module) and not _n.startswith("_")]
                 + ["LinearCrossEntropyOptions"])
