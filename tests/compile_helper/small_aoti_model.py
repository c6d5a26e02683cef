"""What the compile helper's real-compile tests share (test_headers_ahead, test_runtime_apart): a
small model traced to TorchScript with its inputs, as the runner hands the helper a model, and its
AOTInductor package's outputs.

Importing this module sets TORCHINDUCTOR_VEC_ISA_OK=0 before torch: the tests load the packages
in their own process too, and without it Inductor would run its vector-ISA probes at the load
(about 25 s on a 2-core CPU), as the helper would without it (Inductor reads the variable when it
is imported)."""
import os

os.environ["TORCHINDUCTOR_VEC_ISA_OK"] = "0"
import torch  # noqa: E402

PYTHON_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")


class SmallNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                          torch.nn.Linear(32, 4))

    def forward(self, x):
        return (self.layers(x),)


def write_small_model(root):
    """Saves root/model.pt (TorchScript) and root/inputs.pt; returns (module, example input)."""
    torch.manual_seed(0)
    module = SmallNet().eval()
    example = torch.randn(8, 16)
    torch.jit.trace(module, (example,)).save(os.path.join(root, "model.pt"))
    torch.save((example,), os.path.join(root, "inputs.pt"))
    return module, example


def package_output(package, example):
    """The first output of the AOTInductor package at `package` on `example`."""
    loaded = torch._inductor.aoti_load_package(package)
    with torch.no_grad():
        actual = loaded(example)
    return actual[0] if isinstance(actual, (list, tuple)) else actual
