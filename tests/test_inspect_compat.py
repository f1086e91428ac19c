"""impostor/inspect_compat.py: the package scan Inspect repeats for every task is done once
(a 378-experiment shard spent over 13 minutes in it before its first game, issue 18)."""

from __future__ import annotations


def test_package_scan_cached_and_same_answer():
    from inspect_ai._util import package

    from impostor.inspect_compat import cache_package_scan
    from tasks.impostor import impostor

    before = package.get_distribution_for_object(impostor)
    cache_package_scan()
    cache_package_scan()  # idempotent: not wrapped twice
    assert hasattr(package.packages_distributions, "cache_info")
    assert not hasattr(package.packages_distributions.__wrapped__, "cache_info")
    first = package.packages_distributions()
    assert package.packages_distributions() is first  # scanned once
    after = package.get_distribution_for_object(impostor)
    assert before is not None and after is not None and after.name == before.name == "impostor-bench"
    assert "impostor-bench" in first.get("tasks", [])
