"""The device modules of accelerators ptcore does not have (``ptcore.mps``, ``ptcore.xpu``,
``ptcore.mtia``), as torch's are in a build without that device: ``is_available()`` is
False, ``device_count()`` 0, seeding is a silent no-op, and the calls that need the device
raise the exception torch raises there (``RuntimeError`` for MPS and MTIA,
``AssertionError`` "not compiled with XPU enabled" for XPU)."""
__all__ = ["make_module_functions"]


def make_module_functions(name, missing):
    """The functions of device module ``name`` (``"mps"``...): a dict of name -> function.

    ``missing(call)`` builds the exception raised by a call needing the device, ``call``
    being the native call's name as torch names it in its message.
    """
    label = name.upper()

    def needs_device(fn_name, call):
        def fn(*args, **kwargs):
            raise missing(call)
        fn.__name__ = fn.__qualname__ = fn_name
        fn.__doc__ = f"Raises: ptcore has no {label} device."
        return fn

    def is_available():
        return False

    def device_count():
        return 0

    def is_initialized():
        return False

    def manual_seed(seed):
        pass

    def manual_seed_all(seed):
        pass

    def seed():
        pass

    def seed_all():
        pass

    def memory_allocated(device=None):
        return 0

    fns = {}
    for fn in (is_available, device_count, is_initialized, manual_seed, manual_seed_all, seed,
               seed_all, memory_allocated):
        fn.__qualname__ = fn.__name__
        fn.__module__ = f"ptcore.{name}"
        fn.__doc__ = f"{fn.__name__}, as torch.{name}.{fn.__name__} without a {label} device."
        fns[fn.__name__] = fn
    fns["needs_device"] = needs_device
    return fns
