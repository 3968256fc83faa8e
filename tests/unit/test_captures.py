"""The capture file: merged by (lab, step, torch), saved and loaded unchanged, newest capture first."""

import json

from devicelab import captures


def capture(lab="02-dataparallel", step="buggy_training_step", torch="2.14.1", date="2025-11-29", **more):
    return {
        "lab": lab,
        "step": step,
        "torch": torch,
        "date": date,
        "gpu": "NVIDIA H200",
        "message": f"captured {lab} {step} {torch} {date}",
        **more,
    }


def test_merge_replaces_a_capture_of_the_same_lab_step_and_torch():
    old = capture(date="2025-10-01")
    new = capture(date="2025-11-29")
    assert captures.merge([old], [new]) == [new]


def test_merge_keeps_captures_of_other_torch_versions_steps_and_labs():
    old = [capture(torch="2.7.1"), capture(step="other_step"), capture(lab="03-other")]
    new = [capture(torch="2.14.1")]
    merged = captures.merge(old, new)
    assert len(merged) == 4
    assert all(c in merged for c in old + new)


def test_merge_returns_captures_sorted_by_lab_step_and_torch():
    merged = captures.merge(
        [capture(lab="03-b"), capture(step="z")], [capture(step="a"), capture(lab="01-a")]
    )
    keys = [(c["lab"], c["step"], c["torch"]) for c in merged]
    assert keys == sorted(keys)


def test_merge_of_nothing_new_keeps_the_old_captures():
    old = [capture(step="b"), capture(step="a")]
    assert captures.merge(old, []) == sorted(old, key=lambda c: c["step"])


def test_save_then_load_gives_the_same_captures(tmp_path):
    path = tmp_path / "data" / "gpu_captures.json"
    saved = [capture(), capture(step="other", message="预期的错误 on cuda:0")]
    captures.save(saved, path)
    assert captures.load(path) == saved


def test_the_saved_file_says_what_generates_it(tmp_path):
    path = tmp_path / "gpu_captures.json"
    captures.save([capture()], path)
    raw = path.read_text(encoding="utf-8")
    assert json.loads(raw)["_generated"] == captures.HEADER
    assert "tools/gpu_check.py" in captures.HEADER
    assert raw.endswith("\n")


def test_loading_a_missing_file_gives_no_captures(tmp_path):
    assert captures.load(tmp_path / "absent.json") == []


def test_latest_picks_the_newest_capture_of_the_step():
    found = [
        capture(torch="2.7.1", date="2025-06-01"),
        capture(torch="2.14.1", date="2025-11-29"),
        capture(torch="2.8.0", date="2025-09-15"),
        capture(step="other_step", date="2025-12-31"),
        capture(lab="03-other", date="2026-01-01"),
    ]
    assert captures.latest("02-dataparallel", "buggy_training_step", found)["date"] == "2025-11-29"


def test_latest_is_none_for_a_step_never_captured():
    assert captures.latest("02-dataparallel", "never_captured", [capture()]) is None
    assert captures.latest("02-dataparallel", "buggy_training_step", []) is None


def test_last_verified_picks_the_newest_capture_of_any_step_of_the_lab():
    found = [
        capture(step="a", date="2025-06-01"),
        capture(step="b", date="2025-11-29"),
        capture(lab="03-other", date="2026-01-01"),
    ]
    assert captures.last_verified("02-dataparallel", found)["step"] == "b"
    assert captures.last_verified("04-never", found) is None


def test_latest_and_last_verified_read_the_capture_file_by_default(monkeypatch, tmp_path):
    path = tmp_path / "gpu_captures.json"
    captures.save([capture(date="2025-01-01"), capture(step="other", date="2025-02-02")], path)
    real_load = captures.load
    monkeypatch.setattr(captures, "load", lambda: real_load(path))
    assert captures.latest("02-dataparallel", "buggy_training_step")["date"] == "2025-01-01"
    assert captures.last_verified("02-dataparallel")["date"] == "2025-02-02"


def claim_run(test="tests/claims/test_claims_ch02_dataparallel.py::test_conv_raises", torch="2.14.1",
              outcome="passed", date="2025-11-29"):
    return {"test": test, "outcome": outcome, "message": "", "gpu": "NVIDIA H200", "torch": torch, "cuda": "13.0",
            "date": date}


def test_a_file_written_before_claims_were_recorded_still_loads(tmp_path):
    path = tmp_path / "gpu_captures.json"
    path.write_text(json.dumps({"_generated": "old header", "captures": [capture()]}), encoding="utf-8")
    assert captures.load(path) == [capture()]
    assert captures.load_claims(path) == []
    assert captures.load_claims(tmp_path / "absent.json") == []


def test_saving_captures_keeps_the_claims_runs_already_in_the_file(tmp_path):
    path = tmp_path / "gpu_captures.json"
    captures.save([capture()], path, claims=[claim_run()])
    captures.save([capture(), capture(step="other")], path)
    assert captures.load_claims(path) == [claim_run()]
    assert len(captures.load(path)) == 2
    captures.save([], path, claims=[])
    assert captures.load_claims(path) == [] and captures.load(path) == []


def test_merge_claims_replaces_a_run_of_the_same_test_and_torch_and_keeps_the_others():
    old = [claim_run(outcome="failed", date="2025-10-01"), claim_run(torch="2.7.1"),
           claim_run(test="tests/claims/test_claims_ch04_batches.py::test_copy[pinned]")]
    new = [claim_run(date="2025-11-29")]
    merged = captures.merge_claims(old, new)
    assert len(merged) == 3
    assert claim_run(date="2025-11-29") in merged and claim_run(outcome="failed", date="2025-10-01") not in merged
    assert [(c["test"], c["torch"]) for c in merged] == sorted((c["test"], c["torch"]) for c in merged)


def test_the_committed_file_holds_only_what_a_gpu_check_wrote():
    raw = json.loads(captures.CAPTURE_FILE.read_text(encoding="utf-8"))
    assert set(raw) <= {"_generated", "captures", "claims"}
    for run in raw.get("claims", []):
        assert {"test", "outcome", "gpu", "torch", "date"} <= set(run)
