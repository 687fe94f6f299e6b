"""Layer classes of ``ptcore.nn`` (re-exported by ``ptcore.nn``)."""
from ptcore.nn.modules.module import Module  # noqa: F401
from ptcore.nn.modules.container import (  # noqa: F401
    Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict,
)
from ptcore.nn.modules.rnn import (  # noqa: F401
    RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell,
)
from ptcore.nn.modules.sparse_bag import EmbeddingBag  # noqa: F401
from ptcore.nn.modules.ctc import CTCLoss  # noqa: F401
