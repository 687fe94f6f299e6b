"""``ptcore.fx.experimental`` (``torch.fx.experimental``): graph passes built on
fx that torch ships as experimental -- :mod:`.optimization` (conv/linear-BN
fusion, dropout removal, subgraph extraction) -- and :mod:`.proxy_tensor`'s
names that libraries check (no ``make_fx`` tracer: no proxy mode is ever active)."""
