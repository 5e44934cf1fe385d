"""``python -m plugrad run``: an unmodified PyTorch program on plugrad, on cpu and ref."""
import json
import sys

import pytest

from tests.programs.conftest import run_plugrad

DEVICES = ["cpu", "ref"]

CHECKS = '''
import json, sys
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.dataloader import DataLoader as DL
from torch.utils.data.dataset import Dataset
from torch.utils.data.sampler import RandomSampler
from torch.utils.data.distributed import DistributedSampler
from torch.utils.data._utils.collate import default_collate
from torch.nn.modules.loss import _Loss, _WeightedLoss
from torch.nn.modules.module import Module
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.utils import _pair
from torch.autograd.function import Function
from torch.autograd import Variable
import torch.nn.init as init
import torch.backends.cudnn as cudnn
import torch.serialization, torch.random, torch.version
import plugrad, plugrad.backends

cudnn.benchmark = True
cudnn.deterministic = True
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
real_torch = [n for n, m in sys.modules.items()
              if "site-packages/torch/" in (getattr(m, "__file__", None) or "")]
try:
    import torch.no_such_module
    missing = None
except ModuleNotFoundError as exc:
    missing = str(exc)
print(json.dumps({
    "argv": sys.argv,
    "version": torch.__version__,
    "size": repr(torch.zeros(2, 3).shape),
    "dtype": repr(torch.float32),
    "type": torch.zeros(2).type(),
    "device": str(torch.zeros(1).device),
    "cpu_means": str(torch.device("cpu")),
    "same_modules": (nn.Linear is plugrad.nn.Linear and DL is DataLoader and
                     Module is nn.Module and torch.Tensor is plugrad.Tensor and
                     torch.nn is sys.modules["plugrad.nn"]),
    "pair": _pair(3),
    "knobs": [cudnn.benchmark, torch.backends.cudnn.deterministic,
              torch.backends.cuda.matmul.allow_tf32, torch.backends.mps.is_available(),
              torch.backends.cudnn.is_available()],
    "plugins_untouched": plugrad.backends.__name__ == "plugrad.backends",
    "torch_backends": torch.backends.__name__,
    "real_torch": real_torch,
    "missing": missing,
    "numpy": type(torch.ones(2).cpu().numpy()).__name__,
}))
'''


@pytest.mark.parametrize("device", DEVICES)
def test_script_sees_torch_as_plugrad(script, device):
    prog = script(CHECKS)
    r = run_plugrad(["run", "--device", device, str(prog), "--lr", "0.1", "x"], prog.parent)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["argv"] == [str(prog), "--lr", "0.1", "x"]
    assert out["version"].startswith("2.13.0+plugrad")
    assert out["size"] == "torch.Size([2, 3])" and out["dtype"] == "torch.float32"
    assert out["type"] == "torch.FloatTensor"
    assert out["device"] == device and out["cpu_means"] == device
    assert out["same_modules"] and out["pair"] == [3, 3]
    assert out["knobs"] == [True, True, True, False, False]
    assert out["plugins_untouched"] and out["torch_backends"] == "plugrad.torch_backends"
    assert out["real_torch"] == []
    assert "torch.no_such_module" in out["missing"] and "plugrad.no_such_module" in out["missing"]
    assert out["numpy"] == "ndarray"


def test_device_from_environment(script):
    prog = script("import torch; print(torch.zeros(1).device, torch.device('cpu'))")
    r = run_plugrad(["run", str(prog)], prog.parent, env={"PLUGRAD_DEVICE": "ref"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["ref", "ref"]


def test_module_mode_and_exit_status(script, tmp_path):
    script("import sys, torch\nprint(sys.argv[1:], torch.ones(2).sum().item())\n"
           "sys.exit(3)\n", name="mymod.py")
    r = run_plugrad(["run", "-m", "mymod", "a", "--b"], tmp_path)
    assert r.returncode == 3, r.stderr
    assert r.stdout.strip() == "['a', '--b'] 2.0"


def test_errors_keep_their_traceback_and_status(script, tmp_path):
    prog = script("import torch\n\ndef f():\n    raise ValueError('boom')\n\nf()\n")
    r = run_plugrad(["run", str(prog)], tmp_path)
    assert r.returncode == 1
    assert "ValueError: boom" in r.stderr and f'File "{prog}", line 4' in r.stderr
    r = run_plugrad(["run", str(tmp_path / "absent.py")], tmp_path)
    assert r.returncode == 2 and "can't open file" in r.stderr
    r = run_plugrad(["run", "--device", "nosuch", str(prog)], tmp_path)
    assert r.returncode == 2 and "--device nosuch" in r.stderr
    r = run_plugrad(["run", "--bogus", str(prog)], tmp_path)
    assert r.returncode == 2 and "unknown option '--bogus'" in r.stderr
    r = run_plugrad(["run", "--help"], tmp_path)
    assert r.returncode == 0 and "python -m plugrad run [--device DEVICE] SCRIPT" in r.stdout


def test_child_processes_inherit_alias_and_device(script, tmp_path):
    prog = script('''
        import multiprocessing as mp, subprocess, sys
        import torch

        def child(q):
            import torch
            q.put(f"{type(torch).__name__} {torch.zeros(1).device}")

        if __name__ == "__main__":
            out = subprocess.run([sys.executable, "-c",
                                  "import torch; print(type(torch).__name__, torch.zeros(1).device)"],
                                 capture_output=True, text=True, check=True).stdout.strip()
            ctx = mp.get_context("spawn")
            q = ctx.Queue()
            p = ctx.Process(target=child, args=(q,))
            p.start()
            print(out, "|", q.get(timeout=60))
            p.join()
    ''')
    r = run_plugrad(["run", "--device", "ref", str(prog)], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "TorchModule ref | TorchModule ref"


def test_notebook_call_and_refusal_after_real_torch(tmp_path):
    code = ("import plugrad; plugrad.install_torch_alias(); import torch, torch.nn as nn; "
            "print(torch.nn.Linear is plugrad.nn.Linear, torch.Size([1]))")
    import subprocess
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "True torch.Size([1])"
    code = ("import plugrad; plugrad.install_torch_alias(); import torch.nn; "
            "plugrad.uninstall_torch_alias(); import torch; "
            "print(torch.__version__, plugrad.Size([2]), plugrad.device('cpu'))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "2.13.0+cpu plugrad.Size([2]) cpu"
    code = "import torch, plugrad; plugrad.install_torch_alias()"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 1 and "the real torch is already imported" in r.stderr
