"""DistributedDataParallel on 2 MPI processes vs one process on the joined batches."""
import pytest

from .launch import results, run

pytestmark = pytest.mark.timeout(240)

TOL = 1e-6  # float32, a few SGD steps


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    out = tmp_path_factory.mktemp("ddp")
    job = run("ddp.py", n=2, timeout=180, out_dir=out)
    return results(job, out, 2)


@pytest.mark.parametrize("case", ["cpu_buckets", "cpu_one_bucket", "ref"])
def test_ddp_matches_single_process(ranks, case):
    for r in ranks:
        c = r[case]
        assert c["start_equal"] == 0.0  # rank 1 started from other weights: broadcast
        assert c["moved"] > 1e-2  # training did change the parameters
        assert c["vs_reference"] < TOL, c
        assert c["between_ranks"] == 0.0
    assert ranks[0][case]["buckets"] == ranks[1][case]["buckets"]


def test_small_bucket_cap_makes_several_buckets(ranks):
    c = ranks[0]["cpu_buckets"]
    assert len(c["buckets"]) > 1 and sum(c["buckets"]) == c["n_params"]
    assert ranks[0]["cpu_one_bucket"]["buckets"] == [ranks[0]["cpu_one_bucket"]["n_params"]]


def test_no_sync_accumulation_matches(ranks):
    for r in ranks:
        c = r["no_sync"]
        assert c["local_grad_differs"] is True  # no_sync backward did not all-reduce
        assert c["moved"] > 1e-2
        assert c["vs_reference"] < TOL, c
        assert c["between_ranks"] == 0.0


def test_unused_parameters(ranks):
    for r in ranks:
        assert r["unused/False"]["ok"] is False
        assert "find_unused_parameters=True" in r["unused/False"]["error"]
        assert "unused.weight" in r["unused/False"]["error"]
        assert r["unused/True"] == {"ok": True, "equal": True}
