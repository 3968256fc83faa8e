"""devicelab.ddp: a real 2-process torchrun job on the CPU, a failing rank, a hanging job, and the answers file."""

import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import torch

from devicelab import ddp
from devicelab.chapters.multigpu import RANK_DEVICE_SOLUTION, WRAP_MODEL_SOLUTION
from devicelab.messages import set_language

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX")
CPU_ONLY = {"CUDA_VISIBLE_DEVICES": ""}  # the same job on a CUDA machine: gloo ranks on the CPU


@pytest.fixture(autouse=True)
def english():
    set_language("en")
    yield


def group_is_gone(run: ddp.DDPRun) -> bool:
    """True when no process of the job's process group is left."""
    try:
        os.killpg(run.pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture(scope="module")
def finished_job() -> ddp.DDPRun:
    """The course's script with its own functions: 2 gloo processes on the CPU, 3 epochs."""
    return ddp.launch(nproc=2, args=["--epochs", "3"], timeout=120, echo=False, env=CPU_ONLY)


def test_torchrun_command_is_python_m_torch_distributed_run():
    command = ddp.torchrun_command("train.py", 2, ["--epochs", 3])
    assert command == [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
                       "train.py", "--epochs", "3"]


def test_a_two_process_gloo_job_trains_and_ends_cleanly(finished_job):
    run = finished_job
    assert run.ok and run.returncode == 0 and not run.timed_out, run.output[-2000:]
    assert sorted(run.ranks) == [0, 1]
    for rank in (0, 1):
        records = run.records(rank)
        assert [r["epoch"] for r in records if "epoch" in r] == ["1", "2", "3"]
        assert all(r["device"] == "cpu" and r["samples"] == "256" for r in records if "epoch" in r)
        assert run.ranks[rank][-1].endswith("same_weights_on_every_rank True")
    losses = run.series("loss", rank=0)
    assert len(losses) == 3 and losses[-1] < losses[0]
    assert run.series("loss", rank=0) != run.series("loss", rank=1)  # different data, same weights
    assert group_is_gone(run)


def test_a_failing_rank_ends_the_job_and_every_process(capsys):
    run = ddp.launch(nproc=2, args=["--fail-rank", "1"], timeout=120, env=CPU_ONLY)
    out = capsys.readouterr().out
    assert not run.ok and not run.timed_out and run.returncode not in (0, None)
    assert run.failures() == {1: "RuntimeError: rank 1 fails on purpose (--fail-rank 1)"}
    assert "torchrun: the job failed (exit status" in out
    assert group_is_gone(run)


def test_a_hanging_job_is_stopped_at_its_time_limit(tmp_path, capsys):
    script = tmp_path / "hang.py"
    script.write_text("import os, time\nprint(f\"rank {os.environ['RANK']} | waiting\", flush=True)\n"
                      "time.sleep(600)\n", encoding="utf-8")
    run = ddp.launch(script, nproc=2, timeout=5)  # the limit's length is not what is tested: it only waits
    out = capsys.readouterr().out
    assert run.timed_out and not run.ok and run.returncode is None
    assert run.seconds < 50
    assert "still running after 5 s" in out
    assert group_is_gone(run)


def test_write_module_gives_every_rank_the_functions_and_the_imports(tmp_path):
    source = tmp_path / "answers_src.py"
    source.write_text(ddp.HEADER + RANK_DEVICE_SOLUTION + "\n\n" + WRAP_MODEL_SOLUTION + "\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location("answers_src", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = ddp.write_module(module.rank_device, module.wrap_model)
    try:
        written: dict = {}
        exec(path.read_text(encoding="utf-8"), written)
        assert written["rank_device"](0) == (torch.device("cuda", 0) if torch.cuda.is_available() else
                                            torch.device("cpu"))
        assert path.read_text(encoding="utf-8").startswith(ddp.HEADER)
    finally:
        path.unlink()


def test_the_temporary_module_file_is_removed_when_the_process_that_wrote_it_ends(tmp_path):
    """A notebook that launches the job leaves nothing in the temporary folder once its kernel ends."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    script = tmp_path / "writer.py"
    script.write_text("import sys, tempfile\nfrom devicelab import ddp\n\n\ndef f(x):\n    return x\n\n\n"
                      "tempfile.tempdir = sys.argv[1]\nwritten = ddp.write_module(f)\n"
                      "print(written, written.exists())\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(script), str(scratch)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    name, existed = done.stdout.split()
    assert existed == "True" and Path(name).parent == scratch and Path(name).name.startswith("ddp_answers_")
    assert not list(scratch.iterdir())


def test_a_module_file_left_by_a_killed_process_is_removed_by_the_next_write(tmp_path, monkeypatch):
    """A kernel that was killed runs no exit handler; the next write sweeps its file, and no living process's."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    orphan = tmp_path / f"ddp_answers_{ended.pid}_abc.py"
    living = tmp_path / f"ddp_answers_{os.getppid()}_def.py"  # the process that started this one is alive
    orphan.write_text("", encoding="utf-8")
    living.write_text("", encoding="utf-8")
    written = ddp.write_module(_double)
    try:
        assert not orphan.exists()
        assert living.exists() and written.exists() and written.parent == tmp_path
    finally:
        written.unlink()


def _double(x):
    return 2 * x


def test_records_and_failures_read_the_lines_of_each_rank():
    run = ddp.DDPRun([], 1, "[rank0]: Traceback\n[rank0]: ValueError: bad ids\nother", 1.0,
                     ranks={0: ["device cpu | epoch 1 | loss 0.5", "device cpu | epoch 2 | loss 0.25"]})
    assert run.series("loss") == [0.5, 0.25]
    assert run.records(0)[0] == {"device": "cpu", "epoch": "1", "loss": "0.5"}
    assert run.failures() == {0: "ValueError: bad ids"}
    assert not run.ok


def test_a_job_whose_rank_gloo_aborted_without_a_python_error_runs_once_more(tmp_path, capsys):
    marker = tmp_path / "aborted-once"
    script = tmp_path / "abort_once.py"
    script.write_text(
        "import os, pathlib\n"
        f"marker = pathlib.Path({str(marker)!r})\n"
        "print(f\"rank {os.environ['RANK']} | attempt {2 if marker.exists() else 1}\", flush=True)\n"
        "if os.environ['RANK'] == '1' and not marker.exists():\n"
        "    marker.touch()\n"
        "    os.abort()\n", encoding="utf-8")
    run = ddp.launch(script, nproc=2, timeout=60)
    out = capsys.readouterr().out
    assert run.ok and "running the job once more" in out and "SIGABRT" in run.output
    assert run.ranks[1][-1] == "attempt 2"
