"""The operator table and the one dispatch point (see ``doc/dispatch.rst``).

- :mod:`.table`: one :class:`~.table.OpDef` per public op (name, family,
  tags, autocast category, autograd body);
- :mod:`.dispatcher`: the entries every public op call goes through and the
  ordered stack of interception layers;
- :mod:`.generate`: makes ``ptcore.X`` / ``Tensor.X`` / ``nn.functional.X``
  from the table;
- the layers: :mod:`.torch_function`, :mod:`.profiling`, :mod:`.autocast`,
  :mod:`.python_dispatch` (kernel level).
"""
