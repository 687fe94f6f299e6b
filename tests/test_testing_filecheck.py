"""``ptcore.testing.FileCheck`` against ``torch.testing.FileCheck``: the same
checks over the same text pass or raise the same exception with the same
message (the searched text highlighted as torch's ``SourceRange`` does); and
``FileCheck`` runs on the graphs of ``ptcore.jit``."""
import pytest

import ptcore
from ptcore.testing import FileCheck

torch = pytest.importorskip("torch")

TEXTS = {
    "graph": "graph(%x):\n  %1 = aten::mul(%x, 2)\n  %2 = aten::relu(%1)\n"
             "  %3 = aten::add(%2, 1)\n  return (%3)\n",
    "letters": "a\nb b\nc\nd\ne\nf\ng\nh\ni\nj\n",
    "highlight": "x = 1\n    ~ <--- HERE\nfoo(bar)\n    ~~~\n",
    "one_line": "no newline at end",
    "escapes": 'a "q" \t b\n',
    "empty": "",
}

CHECKS = {
    "check_next": lambda F: F().check("aten::mul").check_next("aten::relu"),
    "check_next_fails": lambda F: F().check("aten::mul").check_next("aten::add"),
    "check_missing": lambda F: F().check("aten::sub"),
    "check_not": lambda F: F().check_not("aten::relu"),
    "check_same": lambda F: F().check("aten::mul").check_same("%x"),
    "check_same_fails": lambda F: F().check("aten::mul").check_same("relu"),
    "count_exactly": lambda F: F().check_count("aten::", 3, exactly=True),
    "count_exactly_fails": lambda F: F().check_count("aten::", 2, exactly=True),
    "count_too_many": lambda F: F().check_count("aten::", 4),
    "count_zero_exactly": lambda F: F().check_count("aten::", 0, exactly=True),
    "count_positional_exactly": lambda F: F().check_count("b", 2, True),
    "regex": lambda F: F().check_regex("aten::r.*u"),
    "regex_fails": lambda F: F().check_regex("aten::x.*u"),
    "regex_then_check": lambda F: F().check_regex("a.*u").check("aten::add"),
    "dag": lambda F: F().check_dag("aten::relu").check_dag("aten::mul").check("aten::add"),
    "dag_after": lambda F: F().check("aten::relu").check_dag("aten::mul"),
    "not_between": lambda F: F().check("e").check_not("z").check("g"),
    "not_between_fails": lambda F: F().check("e").check_not("f").check("g"),
    "two_nots": lambda F: F().check("e").check_not("f").check_not("q").check("h"),
    "not_to_end": lambda F: F().check("e").check_not("j"),
    "next_line": lambda F: F().check("h").check_next("i"),
    "next_line_fails": lambda F: F().check("h").check_next("j"),
    "same_line": lambda F: F().check("b").check_same("b"),
    "order": lambda F: F().check("i").check("b"),
    "next_at_end": lambda F: F().check("j").check_next("k"),
    "highlighted": lambda F: F().check_source_highlighted("foo"),
    "highlighted_partly": lambda F: F().check_source_highlighted("bar"),
    "highlighted_short": lambda F: F().check_source_highlighted("x"),
    "highlighted_missing": lambda F: F().check_source_highlighted("zzz"),
    "quotes": lambda F: F().check('"q"'),
    "tab": lambda F: F().check("\t c"),
    "end": lambda F: F().check("end"),
    "next_without_newline": lambda F: F().check("no").check_next("x"),
    "at_end": lambda F: F().check("at end"),
    "not_at_end": lambda F: F().check_not("at"),
    "newline_in_pattern": lambda F: F().check("a").check("at end\n"),
    "no_checks": lambda F: F(),
}

CHECK_STRINGS = [
    "# CHECK: aten::mul\n# CHECK-NEXT: aten::relu",
    "# CHECK: aten::mul\n# CHECK-NEXT: aten::add",
    "# CHECK-FOO: aten::mul",
    "#CHECK-COUNT-2: b\n",
    "# CHECK-COUNT-EXACTLY-1: b",
    "#  CHECK-NOT: q\n # CHECK: d",
    "# CHECK-DAG: c\n# CHECK-DAG: a\n#CHECK-SAME: zz",
    "# CHECK-REGEX: [ef]\n# CHECK: g",
    "# nothing here",
    "#CHECK-COUNT-2 b\n",
    "#CHECK-SOURCE-HIGHLIGHTED: foo",
    "x = 1  # CHECK: x\n#\t\tCHECK-SAME: =",
]


def _outcome(make, text, checks=None):
    try:
        fc = make()
        fc.run(text) if checks is None else fc.run(checks, text)
    except Exception as exc:  # noqa: BLE001 - the outcome is what is compared
        return type(exc), str(exc)
    return None, None


def _compare(build, text, checks=None):
    want = _outcome(lambda: build(torch.testing.FileCheck), text, checks)
    got = _outcome(lambda: build(FileCheck), text, checks)
    if want[0] is RuntimeError and "INTERNAL ASSERT FAILED" in want[1]:
        # torch's assertion names its C++ source line; the reason is the same
        assert got[0] is RuntimeError and want[1].endswith(got[1])
    else:
        assert got == want
    return want[0]


@pytest.mark.parametrize("text", sorted(TEXTS))
@pytest.mark.parametrize("name", sorted(CHECKS))
def test_checks_as_torch(name, text):
    _compare(CHECKS[name], TEXTS[text])


@pytest.mark.parametrize("text", sorted(TEXTS))
@pytest.mark.parametrize("checks", CHECK_STRINGS)
def test_check_comments_as_torch(checks, text):
    _compare(lambda F: F(), TEXTS[text], checks)


def test_most_checks_fail_somewhere():
    kinds = [_compare(build, text) for build in CHECKS.values() for text in TEXTS.values()]
    assert kinds.count(RuntimeError) > 100 and kinds.count(None) > 20


def test_run_on_jit_graphs():
    traced = ptcore.jit.trace(lambda x: (x * 2).relu() + 1, ptcore.ones(3))
    FileCheck().check("aten::mul").check_next("aten::relu").check_next("aten::add").run(
        traced.graph)
    FileCheck().check_count("aten::", 3, exactly=True).check("return").run(traced.graph)
    FileCheck().run("# CHECK: aten::mul\n# CHECK-NOT: aten::sub\n# CHECK: return",
                    traced.graph)
    with pytest.raises(RuntimeError, match='Expected to find "aten::sub" but did not find it'):
        FileCheck().check("aten::sub").run(traced.graph)
    with pytest.raises(RuntimeError, match='Expected to not find "aten::relu" but found it'):
        FileCheck().check("aten::mul").check_not("aten::relu").check("aten::add").run(
            traced.graph)


def test_run_argument_types():
    for bad in [(123,), (None,), ("# CHECK: a", 5)]:
        with pytest.raises(TypeError):
            FileCheck().check("a").run(*bad)
        with pytest.raises(TypeError):
            torch.testing.FileCheck().check("a").run(*bad)


def test_chaining_and_names():
    fc = FileCheck()
    assert fc.check("a") is fc and fc.check_next("b") is fc and fc.check_count("c", 1) is fc
    assert ptcore.FileCheck is FileCheck and repr(fc).startswith("<ptcore.FileCheck object at ")
    fc.run("a\nb c\n")


def test_unrun_instance_notice_as_torch(capfd):
    fc = FileCheck().check("a").check_count("b", 2, exactly=True).check_regex("c+")
    del fc
    tfc = torch.testing.FileCheck().check("a").check_count("b", 2, exactly=True).check_regex("c+")
    del tfc
    out = capfd.readouterr().out
    notice = ("You have not run this instance of FileCheck!\nFileCheck checks:\n\tCHECK: a\n"
              "\tCHECK-COUNT-2: b\n\tCHECK-NOT: b\n\tCHECK-REGEX: c+\n")
    assert out == notice * 2
