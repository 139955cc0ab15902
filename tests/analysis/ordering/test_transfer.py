"""Transfer-time models: what each gives, that per-site draws follow the site's name
(not the order sites were met), and that every output names the model."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.ordering.transfer import TransferModel, site_rates
from webcrawl.storage.errors import ConfigError


def _graph(sites=(0, 0, 1, 1, 2)) -> CapturedGraph:
    g = CapturedGraph.from_edges([0, 0, 2], [1, 2, 3], len(sites), hosts=list(sites))
    names = ["a.test", "b.test", "c.test"]
    return dataclasses.replace(g, host_names=names, site_names=names)


def test_constant_and_crawler_time():
    d = TransferModel("constant", seconds=0.25, crawler_time=0.5).durations(_graph())
    assert d.tolist() == [0.75] * 5


def test_recorded_without_a_database_falls_back_to_seconds():
    assert TransferModel("recorded", seconds=2.0).durations(_graph()).tolist() == [2.0] * 5


def test_bandwidth_latency_plus_size_over_bandwidth_per_site():
    model = TransferModel("bandwidth", bandwidth=1000.0, latency=0.1, crawler_time=0.05)
    sizes = np.array([1000.0, 3000.0, np.nan, 500.0, np.nan])
    d = model.durations(_graph(), sizes=sizes)
    # a missing size takes its site's median (site 1: 500), else the median of all
    expected = 0.05 + 0.1 + np.array([1000, 3000, 500, 500, 1000]) / 1000.0
    assert d == pytest.approx(expected)
    # nothing measured: every page the page_size default
    assert model.durations(_graph(), sizes=np.full(5, np.nan)) == pytest.approx(
        0.15 + model.page_size / 1000.0)


def test_site_draws_follow_the_site_name_and_seed():
    model = TransferModel("bandwidth", bandwidth=1e5, bandwidth_spread=1.0,
                          latency=0.05, latency_spread=0.5, seed=7)
    names = [f"site{i}.test" for i in range(2000)]
    lat, bw = site_rates(names, model)
    perm = np.random.default_rng(0).permutation(len(names))
    lat_p, bw_p = site_rates([names[i] for i in perm], model)
    assert np.array_equal(lat_p, lat[perm]) and np.array_equal(bw_p, bw[perm])
    # log-normal of the stated median and sigma
    assert np.median(bw) == pytest.approx(1e5, rel=0.1)
    assert np.std(np.log(bw)) == pytest.approx(1.0, rel=0.1)
    assert np.std(np.log(lat)) == pytest.approx(0.5, rel=0.1)
    other = site_rates(names, dataclasses.replace(model, seed=8))[1]
    assert not np.array_equal(other, bw)
    # the same names and seed: the same rates, every time
    assert np.array_equal(site_rates(names, model)[1], bw)


def test_describe_names_the_model_and_its_parameters():
    text = TransferModel("bandwidth", bandwidth=25_000, bandwidth_spread=1.0, latency=0.2,
                         crawler_time=0.01, seed=3).describe()
    for part in ("latency + size / bandwidth per site", "median 25,000 B/s, sigma 1",
                 "latency 0.2 s", "seed 3", "0.01 s crawler time per page"):
        assert part in text
    assert TransferModel("constant", seconds=0.5).to_dict()["description"].endswith(
        "0.5 s per page")


@pytest.mark.parametrize("kwargs", [{"kind": "fast"}, {"bandwidth": 0.0},
                                    {"latency": -1.0}, {"seconds": float("nan")},
                                    {"page_size": -5.0}, {"bandwidth_spread": -0.1}])
def test_bad_models_are_config_errors(kwargs):
    with pytest.raises(ConfigError):
        TransferModel(**kwargs)


def test_sizes_of_the_wrong_length_are_refused():
    with pytest.raises(ConfigError, match="one entry per node"):
        TransferModel("bandwidth").durations(_graph(), sizes=np.ones(3))
