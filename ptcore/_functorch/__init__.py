"""``ptcore._functorch`` (``torch._functorch``): the module paths of torch's functorch
implementation that libraries import helpers from (``torch._functorch.vmap``); the
transforms themselves are :mod:`ptcore.func`."""
