"""The measure registry: every documented spelling reaches its family; refusals name the convention and
the measure; a rule of the registry may give a convention another definition."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

import ranklens
from ranklens import measures as M
from ranklens.conventions import Convention, get_convention
from ranklens.errors import InvalidParameterError
from ranklens.measures import REGISTRY, ConventionRule, Measure, definition, parse_measure


def _doc_table() -> list[tuple[set[str] | None, list[str]]]:
    """(families of the row, spellings of the row) read from the table in measures.py's docstring.

    A row whose family column ends with ``...`` lists families by their own names (families None)."""
    lines = M.__doc__.splitlines()
    rules = [i for i, line in enumerate(lines) if re.fullmatch(r"=+\s+=+", line.strip())]
    assert len(rules) == 3, "the docstring's table has a header and a body"
    rows: list[tuple[set[str] | None, list[str]]] = []
    for line in lines[rules[1] + 1:rules[2]]:
        fam_col, spell_col = line[:26], line[26:]
        spellings = re.findall(r"``([^`]+)``", spell_col)
        if fam_col.strip():
            fams = None if fam_col.strip().endswith("...") else set(re.findall(r"``([^`]+)``", fam_col))
            rows.append((fams, spellings))
        else:  # continuation of the row above
            rows[-1][1].extend(spellings)
    return rows


def _concrete(spelling: str) -> str:
    """A documented spelling with ``k`` replaced by a cutoff: ``P.k`` -> ``P.10``."""
    return re.sub(r"([@._])k(?![A-Za-z])", r"\g<1>10", spelling)


def test_every_documented_spelling_maps_to_its_family():
    rows = _doc_table()
    assert len(rows) == 33
    seen = set()
    for fams, spellings in rows:
        assert spellings
        for spelling in spellings:
            text = _concrete(spelling)
            parsed = parse_measure(text)
            assert len(parsed) == 1, text
            family = parsed[0].family
            expected = fams if fams is not None else {spelling}
            assert family in expected, (spelling, family, expected)
            seen.add(family)
    assert seen == set(REGISTRY), "the table documents every family of the registry"


def test_every_registered_spelling_is_documented():
    documented = set()
    for _, spellings in _doc_table():
        for spelling in spellings:
            documented.add(re.split(r"[@.]|_k$|_k-$", spelling)[0].lower())  # the name before its cutoff
    for spec in REGISTRY.values():
        for name in spec.spellings:
            assert name in documented, name
        if spec.gain_suffix:
            for suffix in ("_burges", "_exp"):
                assert spec.family + suffix in documented, spec.family + suffix


def test_documented_cutoffs_and_options():
    assert parse_measure("ndcg_cut.10")[0].k == 10
    assert parse_measure("ndcg@10-")[0].empty == 0.0
    assert parse_measure("ndcg_burges@10")[0].gain == "exponential"
    assert parse_measure("ndcg_lin@10")[0].gain == "linear"
    assert parse_measure("recall@100(rel=2)")[0].relevance_level == 2.0


def test_every_registered_spelling_parses_to_its_family():
    for family, spec in REGISTRY.items():
        assert spec.family == family
        for name in spec.spellings:
            text = f"{name}.10" if spec.cutoff else name
            assert parse_measure(text)[0].family == family, text
            assert parse_measure(text.upper())[0].family == family, text  # case-insensitive


def test_trec_eval_names():
    # the names trec_eval 9.0.7 prints (tests/data and ../shared/data trec_eval outputs)
    names = {"P.10": "P_10", "ndcg_cut.10": "ndcg_cut_10", "map": "map", "map_cut.100": "map_cut_100",
             "recip_rank": "recip_rank", "rprec": "Rprec", "num_ret": "num_ret", "num_rel": "num_rel",
             "num_rel_ret": "num_rel_ret", "recall.100": "recall_100", "success.1": "success_1", "ndcg": "ndcg"}
    for text, trec in names.items():
        assert parse_measure(text)[0].trec_name == trec


def test_cutoff_refused_where_the_family_takes_none():
    for family in ("r_precision", "num_rel"):
        with pytest.raises(InvalidParameterError, match="takes no cutoff"):
            parse_measure(f"{family}@5")


def test_refusal_names_the_convention_and_the_measure():
    evidently = get_convention("evidently")
    assert definition(parse_measure("ndcg@5")[0], evidently) is REGISTRY["ndcg"]
    with pytest.raises(InvalidParameterError) as err:
        definition(parse_measure("map@5")[0], evidently)
    assert str(err.value) == ("convention 'evidently' reproduces Evidently, which has no such measure (it has "
                              "NDCGKMetric); convention='ranklens' gives ranklens' own; not map@5.")
    # a custom convention with shared ranks: the refusal follows the field, under the convention's name
    mine = Convention(name="mine", ties="shared_rank")
    with pytest.raises(InvalidParameterError, match=r"^convention 'mine' reproduces NDCG only; .*; not P\.10\.$"):
        definition(parse_measure("P.10")[0], mine)
    # through evaluate: every refused measure named in one line
    with pytest.raises(InvalidParameterError) as err:
        ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["ndcg@1", "mrr", "P.2"], convention="evidently")
    assert str(err.value) == ("convention 'evidently' reproduces Evidently, which has no such measure (it has "
                              "NDCGKMetric); convention='ranklens' gives ranklens' own; not mrr, P.2.")


def test_unsupported_family_is_refused():
    with pytest.raises(InvalidParameterError, match=r"^measure 'foo@3' is not supported\.$"):
        definition(Measure(key="foo@3", family="foo", k=3), get_convention("ranklens"))


def test_a_rule_may_give_a_convention_another_definition(monkeypatch):
    # a preset with its peer's own definition of a measure: the registry's rule picks it
    other = dataclasses.replace(REGISTRY["map"], description="AP as a peer defines it")
    rule = ConventionRule("ties", "worst", use=other)
    monkeypatch.setitem(REGISTRY, "map", dataclasses.replace(REGISTRY["map"], rules=(rule,)))
    m = parse_measure("map")[0]
    assert definition(m, get_convention("catboost")) is other  # CatBoost's ties are "worst"
    assert definition(m, get_convention("ranklens")) is REGISTRY["map"]


def test_unknown_measure_lists_the_families():
    with pytest.raises(InvalidParameterError) as err:
        parse_measure("ndgc@10")
    for family in REGISTRY:
        assert family in str(err.value)


def test_the_kernels_dispatch_exactly_the_registrys_codes():
    """Every kernel code a family or a preset's own definition uses is one the kernels compute (codes.MEASURES, whose
    graded part values.graded_value takes), and the kernels compute no code the registry does not use."""
    from ranklens._kernels import codes

    used = {spec.code for spec in REGISTRY.values()}
    used |= {rule.use.code for spec in REGISTRY.values() for rule in spec.rules if rule.use is not None}
    assert used == set(codes.MEASURES)
    assert len(codes.MEASURES) == len(set(codes.MEASURES))
    graded = {spec.code for spec in REGISTRY.values() if spec.graded}
    assert graded == set(codes.GRADED)


def test_an_unknown_kernel_code_is_an_error_not_a_fall_through():
    from ranklens._kernels import api, codes

    res = ranklens.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"a": 1.0, "b": 0.5}}, ["P@1"])
    assert res["P@1"] == 1.0
    i8, f8 = np.zeros(1, np.int64), np.zeros(1, np.float64)
    bad = max(codes.MEASURES) + 1
    args = (np.array([0]), np.array([2]), np.zeros(0, np.int64), np.array([1.0, 0.5]), np.array([1.0, 0.0]), 0,
            np.zeros(1, np.int64), np.zeros(0, np.uint8), i8, i8, np.zeros(0, np.int64), f8, False, 0, 2.0, True,
            -np.inf, 2.0, 0, np.array([bad]), np.array([1]), i8, np.ones(1), f8, f8, f8)
    with pytest.raises(ValueError, match=rf"measure code\(s\) \[{bad}\] have no kernel"):
        api.evaluate_queries(*args)
