"""``ptcore.distributed._composable`` (``torch.distributed._composable``): the old import path
of the FSDP2 API, :mod:`ptcore.distributed._composable.fsdp`."""
