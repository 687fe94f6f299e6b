"""``ptcore.testing`` against ``torch.testing``: each case builds the same
inputs with both libraries, calls ``assert_close`` (``assert_allclose``,
``make_tensor``) of each, and requires the same outcome: both pass, or both
raise the same exception type with the same message once ``torch.`` reads
``ptcore.``."""
import collections
import math
import warnings

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _outcome(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # complex32 is experimental in both
        try:
            call()
        except Exception as exc:  # noqa: BLE001 - the outcome is what is compared
            return type(exc), str(exc)
    return None, None


def _same_outcome(build, fn="assert_close", prefix_only=False):
    got = {}
    for L in (torch, ptcore):
        args, kwargs = build(L)
        got[L.__name__] = _outcome(lambda: getattr(L.testing, fn)(*args, **kwargs))
    (tt, tm), (pt, pm) = got["torch"], got["ptcore"]
    if tm is not None:
        tm = tm.replace("torch.", "ptcore.")
    if prefix_only and tm is not None:
        # an internal error: the same type and description, ptcore's own advice at the end
        cut = tm.index("resulted in the unexpected exception above.")
        tm, pm = tm[:cut], pm[:cut]
    assert pt is tt, f"ptcore raised {pt} ({pm!r}), torch {tt} ({tm!r})"
    assert pm == tm
    return tt


def T(L, data, dtype=None, **kw):
    return L.tensor(data, dtype=getattr(L, dtype) if dtype else None, **kw)


nan, inf = math.nan, math.inf

# name -> L -> ((actual, expected), kwargs)
TENSOR_CASES = {
    "equal": lambda L: ((T(L, [1., 2.]), T(L, [1., 2.])), {}),
    "within_tolerance": lambda L: ((T(L, [1., 2.]), T(L, [1., 2. + 1e-6])), {}),
    "one_of_two": lambda L: ((T(L, [1., 2.5]), T(L, [1., 2.])), {}),
    "all_mismatched": lambda L: ((T(L, [1., 2., 3.]), T(L, [-1., 0., 7.])), {}),
    "matrix_index": lambda L: ((T(L, [[1., 2., 3.], [4., 5., 6.]]),
                                T(L, [[1., 2., 3.], [4., 5.5, 6.1]])), {}),
    "3d_index": lambda L: ((L.arange(24.).reshape(2, 3, 4),
                            L.arange(24.).reshape(2, 3, 4) * L.tensor([1., 1., 1., 1.01])), {}),
    "0d_float": lambda L: ((T(L, 1.5), T(L, 1.25)), {}),
    "0d_float64": lambda L: ((T(L, 0.1, "float64"), T(L, 0.3, "float64")), {}),
    "0d_zero_expected": lambda L: ((T(L, 1.5), T(L, 0.)), {}),
    "0d_int": lambda L: ((T(L, 3), T(L, 5)), {}),
    "0d_bool": lambda L: ((T(L, True), T(L, False)), {}),
    "0d_complex": lambda L: ((T(L, 1 + 2j), T(L, 1 + 3j)), {}),
    "empty": lambda L: ((L.zeros(0), L.zeros(0)), {}),
    "empty_2d": lambda L: ((L.zeros(2, 0), L.zeros(2, 0)), {}),
    "empty_shape": lambda L: ((L.zeros(0), L.zeros(0, 1)), {}),
    "shape": lambda L: ((L.zeros(2, 3), L.zeros(3, 2)), {}),
    "shape_0d": lambda L: ((L.zeros(()), L.zeros(1)), {}),
    "nan_nan": lambda L: ((T(L, [1., nan]), T(L, [1., nan])), {}),
    "nan_nan_equal_nan": lambda L: ((T(L, [1., nan]), T(L, [1., nan])), {"equal_nan": True}),
    "nan_number": lambda L: ((T(L, [1., nan, 3.]), T(L, [1., 2., 3.5])), {}),
    "number_nan": lambda L: ((T(L, [1., 2., 3.]), T(L, [1., nan, 3.])), {}),
    "0d_nan": lambda L: ((T(L, nan), T(L, nan)), {}),
    "0d_nan_equal_nan": lambda L: ((T(L, nan), T(L, nan)), {"equal_nan": True}),
    "inf_inf": lambda L: ((T(L, [inf, -inf]), T(L, [inf, -inf])), {}),
    "inf_minus_inf": lambda L: ((T(L, [1., inf]), T(L, [1., -inf])), {}),
    "inf_finite": lambda L: ((T(L, [inf, 2.]), T(L, [1e30, 2.])), {}),
    "zero_expected": lambda L: ((T(L, [0.5, 1.]), T(L, [0., 1.])), {}),
    "tie_first_index": lambda L: ((T(L, [2., 3., 2.]), T(L, [1., 2., 1.])), {}),
    "int64": lambda L: ((T(L, [1, 2, 3]), T(L, [1, 5, 3])), {}),
    "int64_rtol_ignored": lambda L: ((T(L, [100, 101]), T(L, [100, 100])),
                                     {"rtol": 0.1, "atol": 0}),
    "int_zero_expected": lambda L: ((T(L, [1, 2]), T(L, [0, 2])), {}),
    "uint8_wide_diff": lambda L: ((T(L, [0, 7], "uint8"), T(L, [255, 7], "uint8")), {}),
    "int8": lambda L: ((T(L, [-128, 7], "int8"), T(L, [127, 7], "int8")), {}),
    "int16": lambda L: ((T(L, [3, 7], "int16"), T(L, [3, -7], "int16")), {}),
    "uint16": lambda L: ((T(L, [3, 60000], "uint16"), T(L, [3, 7], "uint16")), {}),
    "uint32": lambda L: ((T(L, [3, 4000000000], "uint32"), T(L, [3, 7], "uint32")), {}),
    "uint64": lambda L: ((T(L, [3, 2**63 + 5], "uint64"), T(L, [3, 7], "uint64")), {}),
    "bool": lambda L: ((T(L, [True, False, True]), T(L, [True, True, False])), {}),
    "bool_equal": lambda L: ((T(L, [True, False]), T(L, [True, False])), {}),
    "float16": lambda L: ((T(L, [1., 2.], "float16"), T(L, [1., 2.01], "float16")), {}),
    "float16_close": lambda L: ((T(L, [1., 2.], "float16"), T(L, [1., 2.001], "float16")), {}),
    "bfloat16": lambda L: ((T(L, [1., 3.], "bfloat16"), T(L, [1., 3.25], "bfloat16")), {}),
    "float64": lambda L: ((T(L, [1., 2.], "float64"), T(L, [1., 2. + 1e-6], "float64")), {}),
    "complex64": lambda L: ((T(L, [1 + 1j, 2 - 1j], "complex64"),
                             T(L, [1 + 1j, 2 - 1.5j], "complex64")), {}),
    "complex128": lambda L: ((T(L, [1 + 1j, 2j], "complex128"),
                              T(L, [1 + 1j, 1e-3 + 2j], "complex128")), {}),
    "complex32": lambda L: ((T(L, [1 + 1j, 2j], "complex32"),
                             T(L, [1 + 1j, 0.5 + 2j], "complex32")), {}),
    "complex_nan": lambda L: ((T(L, [complex(nan, 1), 1j]), T(L, [complex(nan, 1), 1j])), {}),
    "complex_nan_equal_nan": lambda L: ((T(L, [complex(nan, 1), 1j]),
                                         T(L, [complex(1, nan), 1j])), {"equal_nan": True}),
    "complex_inf": lambda L: ((T(L, [complex(inf, 0), 1j]), T(L, [complex(inf, 1), 1j])), {}),
    "exact_float": lambda L: ((T(L, [1., 2.]), T(L, [1., 2. + 1e-6])), {"rtol": 0, "atol": 0}),
    "custom_tolerances_pass": lambda L: ((T(L, [1., 2.]), T(L, [1., 2.1])),
                                         {"rtol": 0.1, "atol": 0}),
    "custom_tolerances_fail": lambda L: ((T(L, [1., 2.]), T(L, [1., 2.5])),
                                         {"rtol": 0.1, "atol": 0.01}),
    "atol_only": lambda L: ((T(L, [1.]), T(L, [1.])), {"atol": 1e-3}),
    "rtol_only": lambda L: ((T(L, [1.]), T(L, [2.])), {"rtol": 1e-3}),
    "dtype": lambda L: ((T(L, [1., 2.]), T(L, [1., 2.], "float64")), {}),
    "dtype_int_float": lambda L: ((T(L, [1, 2]), T(L, [1., 2.])), {}),
    "promote_float32_float64": lambda L: ((T(L, [1., 2.]), T(L, [1., 2. + 5e-6], "float64")),
                                          {"check_dtype": False}),
    "promote_float32_float64_fail": lambda L: ((T(L, [1., 2.]), T(L, [1., 2.01], "float64")),
                                               {"check_dtype": False}),
    "promote_int_float": lambda L: ((T(L, [1, 2]), T(L, [1., 2.5])), {"check_dtype": False}),
    "promote_uint8_int8": lambda L: ((T(L, [200, 2], "uint8"), T(L, [-56, 2], "int8")),
                                     {"check_dtype": False}),
    "promote_uint32_int32": lambda L: ((T(L, [4000000000, 2], "uint32"), T(L, [-5, 2], "int32")),
                                       {"check_dtype": False}),
    "promote_uint64_float": lambda L: ((T(L, [5, 2], "uint64"), T(L, [5., 3.])),
                                       {"check_dtype": False}),
    "promote_bf16_f16": lambda L: ((T(L, [1., 3.], "bfloat16"), T(L, [1., 3.01], "float16")),
                                   {"check_dtype": False}),
    "promote_complex_real": lambda L: ((T(L, [1 + 0j, 2j], "complex64"),
                                        T(L, [1., 0.], "float64")), {"check_dtype": False}),
    "promote_bool_int": lambda L: ((T(L, [True, False]), T(L, [1, 1])), {"check_dtype": False}),
    "stride_unchecked": lambda L: ((L.arange(6.).reshape(2, 3).t(),
                                    L.arange(6.).reshape(2, 3).t().contiguous()), {}),
    "stride": lambda L: ((L.arange(6.).reshape(2, 3).t(),
                          L.arange(6.).reshape(2, 3).t().contiguous()), {"check_stride": True}),
    "noncontiguous_values": lambda L: ((L.arange(12.).reshape(3, 4)[:, ::2],
                                        L.tensor([[0., 2.], [4., 6.], [8., 9.]])), {}),
    "requires_grad": lambda L: ((T(L, [1., 2.], requires_grad=True), T(L, [1., 2.5])), {}),
    "requires_grad_0d": lambda L: ((T(L, 1., requires_grad=True), T(L, 2.)), {}),
    "meta_vs_cpu": lambda L: ((L.empty(2, device="meta"), L.zeros(2)), {}),
    "meta_vs_cpu_unchecked": lambda L: ((L.empty(2, device="meta"), L.zeros(2)),
                                        {"check_device": False}),
    "meta_vs_meta": lambda L: ((L.empty(2, device="meta"), L.empty(2, device="meta")), {}),
    "meta_dtype": lambda L: ((L.empty(2, device="meta"), L.empty(2, device="meta",
                                                                dtype=L.float64)), {}),
    "meta_shape": lambda L: ((L.empty(2, device="meta"), L.empty(3, device="meta")), {}),
    "msg_str": lambda L: ((T(L, [1., 2.5]), T(L, [1., 2.])), {"msg": "custom"}),
    "msg_callable": lambda L: ((T(L, [1., 2.5]), T(L, [1., 2.])),
                               {"msg": lambda m: f"Header\n\n{m}\n\nFooter"}),
    "msg_attribute": lambda L: ((T(L, [1., 2.]), T(L, [1., 2.], "float64")),
                                {"msg": lambda m: m.replace("values", "VALUES")}),
    "msg_value_error_ignored": lambda L: ((T(L, [1.]), T(L, [1.])),
                                          {"rtol": 1e-3, "msg": "never shown"}),
    "subclass_allowed": lambda L: ((L.nn.Parameter(T(L, [1., 2.])), T(L, [1., 2.])), {}),
    "subclass_mismatch": lambda L: ((L.nn.Parameter(T(L, [1., 2.])), T(L, [1., 3.])), {}),
    "subclass_refused": lambda L: ((L.nn.Parameter(T(L, [1., 2.])), T(L, [1., 2.])),
                                   {"allow_subclasses": False}),
    "tensor_vs_float": lambda L: ((T(L, 1.), 1.), {}),
    "float_vs_tensor": lambda L: ((1., T(L, 1.)), {}),
    "tensor_vs_list": lambda L: ((T(L, [1., 2.]), [1., 2.]), {}),
    "tensor_vs_ndarray": lambda L: ((T(L, [1., 2.]), np.array([1., 2.])), {}),
    "tensor_vs_none": lambda L: ((T(L, [1.]), None), {}),
    "conj_view": lambda L: ((T(L, [1 + 2j, 3j]).conj(), T(L, [1 - 2j, 3j])), {}),
    "neg_view": lambda L: ((T(L, [1 + 2j, 3j]).conj().imag, T(L, [-2., -3.5])), {}),
    "expanded": lambda L: ((T(L, [1., 2.]).expand(3, 2), T(L, [[1., 2.], [1., 2.], [1., 2.5]])),
                           {"check_stride": False}),
    "expanded_stride": lambda L: ((T(L, [1., 2.]).expand(3, 2), T(L, [[1., 2.]] * 3)),
                                  {"check_stride": True}),
    "same_strides": lambda L: ((L.zeros(3, 2).t(), L.ones(3, 2).t()), {"check_stride": True}),
    "0d_bfloat16": lambda L: ((T(L, 1.5, "bfloat16"), T(L, 1.7, "bfloat16")), {}),
    "0d_float16": lambda L: ((T(L, 1.5, "float16"), T(L, 1.51, "float16")), {}),
    "0d_uint8": lambda L: ((T(L, 0, "uint8"), T(L, 255, "uint8")), {}),
    "many_mismatches": lambda L: ((L.arange(1000.).reshape(10, 100) * 1.001,
                                   L.arange(1000.).reshape(10, 100)), {}),
    "promote_uint8_uint64": lambda L: ((T(L, [1, 200], "uint8"), T(L, [1, 2**40], "uint64")),
                                       {"check_dtype": False}),
    "promote_int_bool_0d": lambda L: ((T(L, 1), T(L, False)), {"check_dtype": False}),
    "parameter_dtype": lambda L: ((L.nn.Parameter(T(L, [1., 2.])), T(L, [1., 2.], "float64")),
                                  {}),
}

SCALAR_CASES = {
    "int_equal": lambda L: ((3, 3), {}),
    "int": lambda L: ((1, 2), {}),
    "int_zero_expected": lambda L: ((1, 0), {}),
    "int_big": lambda L: ((2**70, 2**70 + 1), {}),
    "float_equal": lambda L: ((0.1 + 0.2, 0.3), {}),
    "float": lambda L: ((1.0, 1.5), {}),
    "float_zero_expected": lambda L: ((1e-3, 0.0), {}),
    "float_tolerances": lambda L: ((1.0, 1.05), {"rtol": 0.1, "atol": 0.0}),
    "float_tolerances_fail": lambda L: ((1.0, 1.5), {"rtol": 0.1, "atol": 0.01}),
    "float_exact": lambda L: ((1.0, 1.0 + 1e-12), {"rtol": 0.0, "atol": 0.0}),
    "float_nan": lambda L: ((nan, nan), {}),
    "float_nan_equal_nan": lambda L: ((nan, nan), {"equal_nan": True}),
    "float_nan_one": lambda L: ((nan, 1.0), {"equal_nan": True}),
    "float_inf": lambda L: ((inf, inf), {}),
    "float_inf_minus_inf": lambda L: ((inf, -inf), {}),
    "float_inf_finite": lambda L: ((inf, 1.0), {}),
    "complex": lambda L: ((1 + 2j, 1 + 3j), {}),
    "complex_nan_equal_nan": lambda L: ((complex(nan, 0), complex(0, nan)), {"equal_nan": True}),
    "int_vs_float": lambda L: ((1, 1.0), {}),
    "int_vs_float_unchecked": lambda L: ((1, 1.0), {"check_dtype": False}),
    "int_vs_float_unchecked_fail": lambda L: ((1, 1.5), {"check_dtype": False}),
    "float_vs_complex_unchecked": lambda L: ((1.0, 1 + 1e-3j), {"check_dtype": False}),
    "rtol_only": lambda L: ((1.0, 1.0), {"rtol": 0.1}),
    "atol_only_int": lambda L: ((1, 1), {"atol": 1}),
    "bool": lambda L: ((True, True), {}),
    "bool_mismatch": lambda L: ((True, False), {}),
    "bool_tolerance_ignored": lambda L: ((True, False), {"rtol": 0.1}),
    "np_bool": lambda L: ((np.bool_(True), False), {}),
    "np_bool_equal": lambda L: ((np.bool_(False), np.bool_(False)), {}),
    "np_bool_vs_int": lambda L: ((np.bool_(True), 1), {}),
    "np_float32": lambda L: ((np.float32(1), np.float32(1.1)), {}),
    "np_float32_vs_float": lambda L: ((np.float32(1), 1.0), {}),
    "np_float16": lambda L: ((np.float16(1), np.float16(1.5)), {}),
    "np_int64_vs_int": lambda L: ((np.int64(1), 2), {}),
    "np_uint8": lambda L: ((np.uint8(1), np.uint8(1)), {}),
    "np_complex64": lambda L: ((np.complex64(1 + 1j), 1 + 2j), {}),
    "none": lambda L: ((None, None), {}),
    "none_vs_int": lambda L: ((None, 1), {}),
    "int_vs_none": lambda L: ((1, None), {}),
    "none_tolerance_ignored": lambda L: ((None, None), {"atol": 1.0}),
    "str": lambda L: (("a", "a"), {}),
    "object": lambda L: ((object, object), {}),
    "set": lambda L: (({1}, {1}), {}),
    "int_vs_str": lambda L: ((1, "1"), {}),
    "msg_scalar": lambda L: ((1.0, 2.0), {"msg": "numbers differ"}),
}

NUMPY_CASES = {
    "equal": lambda L: ((np.array([1., 2.]), np.array([1., 2.])), {}),
    "float64": lambda L: ((np.array([1., 2.]), np.array([1., 2.5])), {}),
    "float32": lambda L: ((np.array([1., 2.], np.float32), np.array([1., 2.5], np.float32)), {}),
    "int32": lambda L: ((np.array([[1, 2], [3, 4]], np.int32),
                         np.array([[1, 2], [3, 5]], np.int32)), {}),
    "bool": lambda L: ((np.array([True, False]), np.array([False, False])), {}),
    "dtype": lambda L: ((np.array([1., 2.], np.float32), np.array([1., 2.])), {}),
    "shape": lambda L: ((np.zeros(2), np.zeros((2, 1))), {}),
    "0d": lambda L: ((np.array(1.5), np.array(2.5)), {}),
    "noncontiguous": lambda L: ((np.arange(8.)[::2], np.array([0., 2., 4., 7.])), {}),
    "vs_tensor": lambda L: ((np.array([1.]), T(L, [1.])), {}),
    "vs_list": lambda L: ((np.array([1., 2.]), [1., 2.]), {}),
    "object_array": lambda L: ((np.array([object()]), np.array([object()])), {}),
    "complex128": lambda L: ((np.array([1 + 1j]), np.array([1 + 2j])), {}),
    "uint64": lambda L: ((np.array([2**63 + 1], np.uint64), np.array([2], np.uint64)), {}),
    "float16": lambda L: ((np.array([1.5], np.float16), np.array([1.51], np.float16)), {}),
    "scalar_vs_0d": lambda L: ((np.float64(1.0), np.array(1.0)), {}),
    "unchecked_dtype": lambda L: ((np.array([1, 2], np.int16), np.array([1., 2.5])),
                                  {"check_dtype": False}),
    "subclass_refused": lambda L: ((np.ma.masked_array([1.]), np.array([1.])),
                                   {"allow_subclasses": False}),
}

CONTAINER_CASES = {
    "list": lambda L: (([T(L, [1.]), T(L, [2.])], [T(L, [1.]), T(L, [2.])]), {}),
    "list_mismatch": lambda L: (([T(L, [1.]), T(L, [2.])], [T(L, [1.]), T(L, [3.])]), {}),
    "tuple_vs_list": lambda L: (((1, 2.0), [1, 2.0]), {}),
    "length": lambda L: (([1, 2], [1, 2, 3]), {}),
    "nested_length": lambda L: (([[1], [2, 3]], [[1], [2]]), {}),
    "empty_sequences": lambda L: (([], ()), {}),
    "dict": lambda L: (({"a": T(L, [1.]), "b": 2}, {"b": 2, "a": T(L, [1.])}), {}),
    "dict_mismatch": lambda L: (({"a": 1, "b": 2.0}, {"a": 1, "b": 2.5}), {}),
    "dict_keys": lambda L: (({"a": 1, "b": 2, "c": 3}, {"a": 1, "d": 4}), {}),
    "dict_keys_nested": lambda L: (([{"a": 1}], [{"b": 1}]), {}),
    "ordered_dict": lambda L: ((collections.OrderedDict(b=1, a=2.0),
                                {"a": 2.5, "b": 1}), {}),
    "nested": lambda L: (([T(L, [1., 2.]), {"a": [1, T(L, [1.])], "b": 2.0}],
                          [T(L, [1., 2.]), {"a": [1, T(L, [1.5])], "b": 2.0}]), {}),
    "nested_msg_callable": lambda L: (([0, {"x": (1.0, T(L, [[1., 2.], [3., 4.]]))}],
                                       [0, {"x": (1.0, T(L, [[1., 2.], [3., 5.]]))}]),
                                      {"msg": lambda m: "<" + m + ">"}),
    "nested_msg_str": lambda L: (([0, {"x": 1.0}], [0, {"x": 2.0}]), {"msg": "plain"}),
    "int_keys": lambda L: (({2: 1.0, 1: 2.0}, {1: 2.0, 2: 1.5}), {}),
    "tuple_keys": lambda L: (({(1, "a"): 1.0}, {(1, "a"): 1.5}), {}),
    "first_failure_wins": lambda L: (([T(L, [1.]), 1, 2.0], [T(L, [2.]), 2, 3.0]), {}),
    "unsupported_before_mismatch": lambda L: (([T(L, [1.]), "x"], [T(L, [2.]), "x"]), {}),
    "value_error_before_mismatch": lambda L: (([1.0, T(L, [1.])], [2.0, T(L, [1.])]),
                                              {"atol": 0.0}),
    "str_in_list": lambda L: ((["ab"], ["ab"]), {}),
    "bytes": lambda L: ((b"ab", b"ac"), {}),
    "size_vs_tuple": lambda L: ((L.Size([2, 3]), (2, 3)), {}),
    "size_mismatch": lambda L: ((L.zeros(2, 3).shape, L.Size([2, 4])), {}),
    "range": lambda L: ((range(3), [0, 1, 2]), {}),
    "sequence_vs_mapping": lambda L: (([1], {0: 1}), {}),
    "tensor_in_list_vs_float": lambda L: (([T(L, 1.)], [1.0]), {}),
    "dtype_in_dict": lambda L: (({"w": T(L, [1.])}, {"w": T(L, [1.], "float64")}), {}),
}


ALL_CASES = {f"{group}:{name}": case
             for group, cases in (("tensor", TENSOR_CASES), ("scalar", SCALAR_CASES),
                                  ("numpy", NUMPY_CASES), ("container", CONTAINER_CASES))
             for name, case in cases.items()}


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_assert_close(name):
    _same_outcome(ALL_CASES[name])


def test_cases_fail_where_expected():
    # the comparisons above are not vacuous: most cases raise, and raise the right kinds
    kinds = collections.Counter(_same_outcome(case) for case in ALL_CASES.values())
    assert kinds[AssertionError] > 100 and kinds[TypeError] > 10 and kinds[ValueError] >= 4
    assert kinds[None] > 20


@pytest.mark.parametrize("pair", [(True, 1), (1, True), (False, 0.0)])
def test_bool_against_number_is_an_internal_error_as_in_torch(pair):
    # torch has no dtype for a bool paired with a number and fails while setting up
    assert _same_outcome(lambda L: (pair, {}), prefix_only=True) is RuntimeError


def _sparse(L, layout, dense, index_dtype=None):
    d = L.tensor(dense)
    if layout == "coo":
        return d.to_sparse()
    s = d.to_sparse_csr() if layout == "csr" else d.to_sparse_csc()
    if index_dtype is None:
        return s
    make = L.sparse_csr_tensor if layout == "csr" else L.sparse_csc_tensor
    comp, plain = ((s.crow_indices(), s.col_indices()) if layout == "csr"
                   else (s.ccol_indices(), s.row_indices()))
    idt = getattr(L, index_dtype)
    return make(comp.to(idt), plain.to(idt), s.values(), s.shape)


A = [[1., 0., 2.], [0., 3., 0.]]
B = [[1., 0., 2.], [0., 3.5, 0.]]
C = [[1., 0., 0.], [0., 3., 2.]]
D = [[1., 0., 2.], [0., 3., 4.]]


@pytest.mark.parametrize("layout", ["coo", "csr", "csc"])
@pytest.mark.parametrize("other,kwargs", [
    (A, {}), (B, {}), (C, {}), (D, {}), (B, {"rtol": 0.2, "atol": 0.0}),
    (B, {"msg": lambda m: m + "!"}),
])
def test_sparse(layout, other, kwargs):
    _same_outcome(lambda L: ((_sparse(L, layout, A), _sparse(L, layout, other)), kwargs))


@pytest.mark.parametrize("layout", ["csr", "csc"])
def test_sparse_compressed_index_dtypes(layout):
    _same_outcome(lambda L: ((_sparse(L, layout, A, "int32"), _sparse(L, layout, B, "int64")),
                             {}))
    _same_outcome(lambda L: ((_sparse(L, layout, A, "int32"), _sparse(L, layout, A, "int64")),
                             {}))


@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("check_layout", [True, False])
@pytest.mark.parametrize("other", [A, B])
def test_sparse_against_dense(layout, check_layout, other):
    _same_outcome(lambda L: ((_sparse(L, layout, A), L.tensor(other)),
                             {"check_layout": check_layout}))
    _same_outcome(lambda L: ((L.tensor(other), _sparse(L, layout, A)),
                             {"check_layout": check_layout}))


def test_sparse_coo_dimensions():
    _same_outcome(lambda L: ((L.tensor(A).to_sparse(), L.tensor(A).to_sparse(sparse_dim=1)), {}))


def test_sparse_layouts_differ():
    _same_outcome(lambda L: ((_sparse(L, "csr", A), _sparse(L, "csc", A)), {}))
    _same_outcome(lambda L: ((_sparse(L, "csr", A), _sparse(L, "coo", B)),
                             {"check_layout": False}))


# -- assert_allclose (deprecated) -------------------------------------------------

ALLCLOSE_CASES = {
    "lists": lambda L: (([1., 2.], [1., 2. + 1e-6]), {}),
    "lists_fail": lambda L: (([1., 2.], [1., 2.1]), {}),
    "nan_equal_by_default": lambda L: ((T(L, [nan]), T(L, [nan])), {}),
    "nan_unequal": lambda L: ((T(L, [nan]), T(L, [nan])), {"equal_nan": False}),
    "float32_default": lambda L: ((T(L, [1.]), T(L, [1. + 5e-5])), {}),
    "float32_default_fail": lambda L: ((T(L, [1.]), T(L, [1. + 5e-4])), {}),
    "float16_default": lambda L: ((T(L, [1.], "float16"), T(L, [1.002], "float16")), {}),
    "float64_default_fail": lambda L: ((T(L, [1.], "float64"), T(L, [1. + 1e-4], "float64")), {}),
    "dtypes_not_checked": lambda L: ((T(L, [1., 2.]), T(L, [1., 2.], "float64")), {}),
    "expected_in_actual_dtype": lambda L: ((T(L, [1, 2]), [1.4, 2.]), {}),
    "scalar": lambda L: ((1.0, 1.5), {}),
    "int": lambda L: (([1, 2], [1, 3]), {}),
    "msg": lambda L: ((T(L, [1.]), T(L, [2.])), {"msg": "custom"}),
    "rtol_only": lambda L: ((T(L, [1.]), T(L, [1.])), {"rtol": 0.1}),
    "tolerances": lambda L: ((T(L, [1.]), T(L, [1.05])), {"rtol": 0.1, "atol": 0.0}),
    "positional": lambda L: ((T(L, [1.]), T(L, [1.5]), 0.0, 0.1), {}),
    "shape": lambda L: ((T(L, [1., 2.]), T(L, [[1., 2.]])), {}),
}


@pytest.mark.parametrize("name", sorted(ALLCLOSE_CASES))
def test_assert_allclose(name):
    _same_outcome(ALLCLOSE_CASES[name], fn="assert_allclose")


def test_assert_allclose_warns_as_torch():
    records = {}
    for L in (torch, ptcore):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            L.testing.assert_allclose(L.tensor([1.]), L.tensor([1.]))
        records[L.__name__] = [(r.category, str(r.message), r.filename) for r in w]
    assert records["ptcore"] == [(c, m.replace("torch.", "ptcore."), f)
                                 for c, m, f in records["torch"]]
    assert records["ptcore"] and records["ptcore"][0][0] is FutureWarning
    assert records["ptcore"][0][2] == __file__


# -- make_tensor ------------------------------------------------------------------

ALL_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
              "float16", "bfloat16", "float32", "float64", "complex32", "complex64", "complex128"]


def _values(t):
    t = t.detach()
    if t.dtype in (ptcore.bfloat16, ptcore.float16):
        t = t.float()
    elif t.dtype is ptcore.complex32:
        t = t.to(ptcore.complex64)
    a = t.numpy()
    return np.concatenate([a.real.ravel(), a.imag.ravel()]) if a.dtype.kind == "c" else a.ravel()


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_make_tensor_default_range(dtype):
    t = ptcore.testing.make_tensor(40, 50, dtype=getattr(ptcore, dtype), device="cpu")
    assert t.shape == (40, 50) and t.dtype is getattr(ptcore, dtype) and t.is_contiguous()
    assert not t.requires_grad
    v = _values(t).astype(np.float64)
    low, high = {"bool": (0, 1), "uint8": (0, 9), "uint16": (0, 9), "uint32": (0, 9),
                 "uint64": (0, 9)}.get(dtype, (-9, 9))
    assert v.min() >= low and v.max() <= high
    if dtype in ("bool",) or "int" in dtype:
        assert set(np.unique(v)) == set(range(low, high + 1))      # every value drawn
    else:
        assert v.max() < 9 and v.min() < -8 and v.max() > 8    # spread over [-9, 9)


@pytest.mark.parametrize("dtype,low,high", [
    ("float32", -1, 1), ("float64", 0.5, 0.75), ("int64", 3, 5), ("int8", -200, 200),
    ("uint8", -5, 3), ("float16", 100, 1e6), ("complex64", -2, -1), ("int32", 2.5, 4.5),
    ("float32", None, -8.5), ("int16", 9, None), ("bool", 1, None), ("float64", -1e308, 1e308),
    ("float32", -1e39, 1e39), ("uint64", 2, 2**62), ("bfloat16", 0, 1e-3),
])
def test_make_tensor_given_range(dtype, low, high):
    dt = getattr(ptcore, dtype)
    t = ptcore.testing.make_tensor((3000,), dtype=dt, device="cpu", low=low, high=high)
    v = _values(t).astype(np.float64)
    if dt.is_floating_point or dt.is_complex:
        info = ptcore.finfo(dt)
        lo = max(-9 if low is None else low, info.min) / 2
        hi = min(9 if high is None else high, info.max) / 2
        v = v / 2                                # halves: the widest ranges overflow
        assert v.min() >= lo and v.max() <= hi
        assert v.max() - v.min() > 0.9 * (hi - lo)
    else:
        info = ptcore.iinfo(dt) if dt is not ptcore.bool else None
        lo = math.ceil(max(-9 if low is None else low, info.min if info else 0))
        hi = math.ceil(min(10 if high is None else high, info.max + 1 if info else 2))
        assert v.min() >= lo and v.max() < hi
        if hi - lo < 500:
            assert set(np.unique(v)) == set(range(lo, hi))


def test_make_tensor_shapes():
    mk = ptcore.testing.make_tensor
    for shape, want in [((), ()), ((3,), (3,)), (((2, 3),), (2, 3)), (([2, 3],), (2, 3)),
                        ((ptcore.Size([4, 1]),), (4, 1)), ((2, 0, 3), (2, 0, 3)),
                        (((),), ())]:
        t = mk(*shape, dtype=ptcore.float32, device="cpu")
        assert t.shape == want
        assert t.shape == torch.testing.make_tensor(*shape, dtype=torch.float32,
                                                    device="cpu").shape


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), (1,), (), (1, 1), (0, 3), (4, 1)])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64"])
def test_make_tensor_noncontiguous(shape, dtype):
    t = ptcore.testing.make_tensor(shape, dtype=getattr(ptcore, dtype), device="cpu",
                                   noncontiguous=True)
    r = torch.testing.make_tensor(shape, dtype=getattr(torch, dtype), device="cpu",
                                  noncontiguous=True)
    assert tuple(t.shape) == shape
    assert t.is_contiguous() == r.is_contiguous() == (math.prod(shape) <= 1)
    assert t.stride() == r.stride() and t.storage_offset() == r.storage_offset()


def test_make_tensor_memory_format():
    t = ptcore.testing.make_tensor(2, 3, 4, 5, dtype=ptcore.float32, device="cpu",
                                   memory_format=ptcore.channels_last)
    r = torch.testing.make_tensor(2, 3, 4, 5, dtype=torch.float32, device="cpu",
                                  memory_format=torch.channels_last)
    assert t.stride() == r.stride() and t.is_contiguous(memory_format=ptcore.channels_last)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_make_tensor_exclude_zero(dtype):
    dt = getattr(ptcore, dtype)
    if dtype in ("uint16", "uint32", "uint64"):
        # torch has no masked_fill for these: the same NotImplementedError
        got = [_outcome(lambda: L.testing.make_tensor(3, dtype=getattr(L, dtype), device="cpu",
                                                      exclude_zero=True)) for L in (torch, ptcore)]
        assert got[0][0] is NotImplementedError and got[0] == got[1]
        return
    low, high = (0, 2) if dtype != "bool" else (None, None)
    if dt.is_floating_point or dt.is_complex:
        low, high = -1e-30, 1e-30        # draws that round to zero in the narrow dtypes
    t = ptcore.testing.make_tensor(500, dtype=dt, device="cpu", low=low, high=high,
                                   exclude_zero=True)
    assert not bool((t == 0).any())
    if dt.is_floating_point:
        tiny = ptcore.finfo(dt).tiny
        assert bool(((t == tiny) | (t.abs() > 0)).all())
    elif not dt.is_complex:
        assert set(np.unique(_values(t))) <= {1} | ({1} if dtype == "bool" else set())


def test_make_tensor_exclude_zero_replacement_as_torch():
    # torch writes finfo.tiny (a real number) where an element is 0; for complex that is tiny+0j
    for dtype in ("float32", "float16", "bfloat16", "float64", "complex64"):
        got = []
        for L in (torch, ptcore):
            t = L.testing.make_tensor(8, dtype=getattr(L, dtype), device="cpu", low=0, high=0,
                                      exclude_zero=True)
            got.append(np.asarray(t.to(L.complex128 if "complex" in dtype else L.float64)))
        np.testing.assert_array_equal(got[0], got[1])


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "bfloat16"])
def test_make_tensor_requires_grad(dtype):
    t = ptcore.testing.make_tensor(3, dtype=getattr(ptcore, dtype), device="cpu",
                                   requires_grad=True)
    assert t.requires_grad and t.is_leaf
    t = ptcore.testing.make_tensor(3, 4, dtype=getattr(ptcore, dtype), device="cpu",
                                   requires_grad=True, noncontiguous=True)
    assert t.requires_grad and not t.is_contiguous()


def test_make_tensor_device():
    assert ptcore.testing.make_tensor(2, dtype=ptcore.float32, device="meta").device.type == "meta"
    assert ptcore.testing.make_tensor(2, dtype=ptcore.int32,
                                      device=ptcore.device("cpu")).device.type == "cpu"


MAKE_TENSOR_ERRORS = {
    "low_ge_high": lambda L: ((3,), {"dtype": L.float32, "low": 2, "high": 1}),
    "low_eq_high_int": lambda L: ((3,), {"dtype": L.int64, "low": 2, "high": 2}),
    "nan_low": lambda L: ((3,), {"dtype": L.float32, "low": nan}),
    "nan_high": lambda L: ((3,), {"dtype": L.float64, "high": nan, "low": 0}),
    "above_range": lambda L: ((3,), {"dtype": L.uint8, "low": 300, "high": 400}),
    "below_range": lambda L: ((3,), {"dtype": L.int8, "low": -400, "high": -300}),
    "below_range_bool": lambda L: ((3,), {"dtype": L.bool, "low": -3, "high": -1}),
    "above_range_float16": lambda L: ((3,), {"dtype": L.float16, "low": 1e5, "high": 1e6}),
    "requires_grad_int": lambda L: ((3,), {"dtype": L.int32, "requires_grad": True}),
    "requires_grad_bool": lambda L: ((3,), {"dtype": L.bool, "requires_grad": True}),
    "noncontiguous_and_memory_format": lambda L: (
        (2, 3, 4, 5), {"dtype": L.float32, "noncontiguous": True,
                       "memory_format": L.channels_last}),
    "dtype_none": lambda L: ((3,), {"dtype": None}),
    "dtype_str": lambda L: ((3,), {"dtype": "float32"}),
}


@pytest.mark.parametrize("name", sorted(MAKE_TENSOR_ERRORS))
def test_make_tensor_errors(name):
    got = []
    for L in (torch, ptcore):
        shape, kwargs = MAKE_TENSOR_ERRORS[name](L)
        got.append(_outcome(lambda: L.testing.make_tensor(*shape, device="cpu", **kwargs)))
    (tt, tm), (pt, pm) = got
    assert tt is not None and pt is tt
    tm = tm.replace("torch.", "ptcore.")
    if name.startswith("dtype_"):
        # torch goes on to ask for an issue at its tracker
        tm = tm[:tm.index("make_tensor().") + len("make_tensor().")]
    assert pm == tm


def test_make_tensor_low_equals_high_float_warns_as_torch():
    records = []
    for L in (torch, ptcore):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t = L.testing.make_tensor(4, dtype=L.float32, device="cpu", low=2.5, high=2.5)
        assert np.all(np.asarray(t) == 2.5)
        records.append([(r.category, str(r.message).replace("torch.", "ptcore."), r.filename)
                        for r in w])
    assert records[0] == records[1] and records[0][0][0] is FutureWarning
