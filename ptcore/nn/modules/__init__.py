"""Layer classes of ``ptcore.nn`` (re-exported by ``ptcore.nn``)."""
from ptcore.nn.modules.module import Module  # noqa: F401
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
from ptcore.nn.modules.rnn import (  # noqa: F401
    RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell,
)
from ptcore.nn.modules.sparse_bag import EmbeddingBag  # noqa: F401
from ptcore.nn.modules.ctc import CTCLoss  # noqa: F401
