"""devicelab.locate: one forward pass names the module whose inputs and own tensors disagree (`meta` = the GPU)."""

import inspect

import pytest
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

import devicelab
from devicelab import messages

META = torch.device("meta")
CPU = torch.device("cpu")


class Norm(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(4)

    def forward(self, x):
        return self.norm(x)


class Layer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.norm = Norm()

    def forward(self, x):
        return self.norm(torch.relu(self.fc(x)))


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(5))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = Encoder()
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        return self.head(self.encoder(x))


def x_on(device: str = "meta") -> torch.Tensor:
    return torch.randn(2, 4, device=device)


def no_hooks_left(model: nn.Module) -> bool:
    return all(not m._forward_pre_hooks and not m._forward_hooks for m in model.modules())


# --- the first module that disagrees ---------------------------------------------------------------


def test_a_layer_left_on_the_cpu_deep_in_a_model_on_meta():
    model = Model().to("meta")
    model.encoder.layers[3].norm.norm.to_empty(device="cpu")  # to_empty: a meta tensor has no data to copy
    report = devicelab.locate(model, x_on("meta"))
    assert report.module == "encoder.layers.3.norm.norm"
    assert report.tensor == "weight"
    assert report.devices == (CPU, META)
    assert report.argument == "input"
    assert not report.ok and report.output is None
    assert str(report).splitlines()[0] == "encoder.layers.3.norm.norm: weight on cpu, input on meta"
    assert isinstance(report.error, RuntimeError)
    assert str(report).splitlines()[1].startswith("PyTorch's message: RuntimeError: ")


def test_a_model_on_the_cpu_with_one_layer_on_meta():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 4), nn.Linear(4, 2))
    model[2].to("meta")
    report = devicelab.locate(model, torch.randn(2, 3))
    assert (report.module, report.tensor, report.devices) == ("2", "weight", (META, CPU))


def test_a_model_on_meta_fed_a_cpu_batch_names_the_first_layer_the_batch_reaches():
    model = Model().to("meta")
    report = devicelab.locate(model, x_on("cpu"))
    assert (report.module, report.tensor, report.devices) == ("encoder.layers.0.fc", "weight", (META, CPU))


def test_one_parameter_of_a_layer_on_another_device():
    model = Model().to("meta")
    model.encoder.layers[1].fc.bias = nn.Parameter(torch.zeros(4))
    report = devicelab.locate(model, x_on("meta"))
    assert (report.module, report.tensor, report.devices) == ("encoder.layers.1.fc", "bias", (CPU, META))


def test_pytorch_does_not_check_devices_for_conv_and_embedding_on_meta():
    # why the hook's comparison, not PyTorch's error, must catch these two
    nn.Conv2d(3, 4, 3).to("meta")(torch.randn(1, 3, 8, 8))
    nn.Embedding(10, 4).to("meta")(torch.tensor([[1, 2]]))


@pytest.mark.parametrize(
    ("layer", "batch"),
    [
        (nn.Conv2d(3, 4, 3), torch.randn(1, 3, 8, 8)),
        (nn.Conv1d(3, 4, 3), torch.randn(1, 3, 8)),
        (nn.Embedding(10, 4), torch.tensor([[1, 2, 3]])),
    ],
    ids=["conv2d", "conv1d", "embedding"],
)
def test_conv_and_embedding_on_meta_fed_cpu_inputs_are_caught_by_the_hook(layer, batch):
    model = nn.Sequential(layer).to("meta")
    report = devicelab.locate(model, batch)
    assert report.error is None
    assert (report.module, report.tensor, report.devices) == ("0", "weight", (META, CPU))
    assert not report.ok
    lines = str(report).splitlines()
    assert lines[0] == "0: weight on meta, input on cpu"
    assert lines[1].startswith("(PyTorch raised no error on this run")


def test_conv_and_embedding_on_the_cpu_fed_meta_inputs_are_caught_too():
    report = devicelab.locate(nn.Conv2d(3, 4, 3), torch.randn(1, 3, 8, 8, device="meta"))
    assert (report.module, report.tensor, report.devices) == ("", "weight", (CPU, META))
    assert str(report).startswith("Conv2d: weight on cpu, input on meta")
    report = devicelab.locate(nn.Embedding(10, 4), torch.tensor([[1, 2]], device="meta"))
    assert (report.module, report.tensor) == ("", "weight")


def test_an_rnn_on_meta_fed_a_cpu_sequence():
    model = nn.LSTM(3, 5, batch_first=True).to("meta")
    report = devicelab.locate(model, torch.randn(2, 4, 3))
    assert (report.module, report.tensor, report.devices) == ("", "weight_ih_l0", (META, CPU))
    assert "Input and parameter tensors are not at the same device" in str(report.error)


class Recurrent(nn.Module):
    """Chapter 05's mistake: the initial hidden state made without device=."""

    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.GRU(3, 5, batch_first=True)

    def forward(self, x):
        hidden = torch.zeros(1, x.shape[0], 5)
        return self.rnn(x, hidden)[0]


def test_a_hidden_state_made_in_forward_on_the_cpu():
    report = devicelab.locate(Recurrent().to("meta"), torch.randn(2, 4, 3, device="meta"))
    assert report.created_by == "torch.zeros" and report.created_in == "" and report.created_device == CPU
    line = inspect.getsourcelines(Recurrent.forward)[1] + 1
    assert report.created == f"inside Recurrent.forward, line {line}: torch.zeros → cpu while inputs are on meta"
    assert report.created_at == f"{__file__}:{line}"
    # the RNN's own check raised; the hook names the argument
    assert (report.module, report.tensor, report.argument, report.devices) == ("rnn", None, "hx", (CPU, META))
    lines = str(report).splitlines()
    assert lines[0] == "rnn: input hx on cpu, other inputs on meta"
    assert lines[1] == report.created
    assert "Input and hidden tensors are not at the same device" in lines[2]


class PlainAttribute(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.pos = torch.randn(4)  # not a buffer: .to() leaves it behind

    def forward(self, x):
        return self.fc(x) + self.pos


def test_a_plain_tensor_attribute_of_the_root_module():
    report = devicelab.locate(PlainAttribute().to("meta"), x_on("meta"))
    assert (report.module, report.tensor, report.devices) == ("", "pos", (CPU, META))
    assert str(report).startswith("PlainAttribute: pos on cpu, input on meta")


class Cached(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.tables = {"scale": [torch.ones(4, device="meta"), torch.ones(4)]}

    def forward(self, x):
        return self.fc(x) * self.tables["scale"][1]


def test_a_tensor_in_a_dict_of_lists_held_by_a_submodule():
    model = nn.Sequential(nn.Linear(4, 4), Cached()).to("meta")
    report = devicelab.locate(model, x_on("meta"))
    assert (report.module, report.tensor, report.devices) == ("1", "tables['scale'][1]", (CPU, META))


class PlainList(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = [nn.Linear(4, 4), nn.Linear(4, 4)]  # a plain list: .to() does not see them

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_layers_in_a_plain_list_are_named_through_the_module_that_holds_them():
    model = nn.Sequential(nn.Linear(4, 4), PlainList()).to("meta")
    report = devicelab.locate(model, x_on("meta"))
    assert (report.module, report.tensor, report.devices) == ("1", "layers[0].weight", (CPU, META))


class MadeInForward(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        noise = torch.randn(x.shape)
        return self.fc(x + noise)


def test_a_tensor_made_in_a_submodules_forward():
    model = nn.Sequential(nn.Linear(4, 4), MadeInForward()).to("meta")
    report = devicelab.locate(model, x_on("meta"))
    assert report.module is None
    assert (report.created_by, report.created_in) == ("torch.randn", "1")
    assert report.created.startswith("inside MadeInForward.forward (1), line ")
    assert report.created.endswith(": torch.randn → cpu while inputs are on meta")
    assert str(report).splitlines()[0] == report.created


class SendsToCpu(nn.Module):
    def __init__(self, how: str) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.how = how

    def forward(self, x):
        y = self.fc(x)
        y = y.cpu() if self.how == "cpu()" else y.to(self.how)
        return y * 2


@pytest.mark.parametrize(
    ("how", "name"), [("cpu()", "torch.Tensor.cpu"), ("cpu", "torch.Tensor.to"), (CPU, "torch.Tensor.to")]
)
def test_a_tensor_sent_to_the_cpu_inside_forward(how, name):
    report = devicelab.locate(SendsToCpu(how).to("meta"), x_on("meta"))
    assert report.created_by == name
    assert report.created.endswith(f"{name} → cpu while inputs are on meta")


def test_tensors_made_where_the_inputs_are_are_fine():
    class Fine(nn.Module):
        def forward(self, x):
            return x + torch.zeros(x.shape, device=x.device) + torch.ones_like(x) + x.new_zeros(x.shape)

    report = devicelab.locate(Fine(), x_on("meta"))
    assert report.ok and report.created is None
    assert report.output.device == META


def test_a_zero_dim_cpu_tensor_is_not_a_disagreement():
    class Scaled(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.temperature = torch.tensor(2.0)

        def forward(self, x):
            return self.fc(x) / self.temperature * torch.tensor(0.5)

    report = devicelab.locate(Scaled().to("meta"), x_on("meta"))
    assert report.ok, str(report)


# --- what is not a device bug ----------------------------------------------------------------------


def test_a_shape_bug_is_not_reported_as_a_device_bug():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(5, 2))
    report = devicelab.locate(model, torch.randn(2, 3))
    assert report.module is None and report.created is None
    assert "mat1 and mat2 shapes cannot be multiplied" in str(report.error)
    assert not report.ok
    lines = str(report).splitlines()
    assert lines[0].startswith("no device disagreement found")
    assert "shapes cannot be multiplied" in lines[1]


def test_a_shape_bug_on_meta_is_not_reported_as_a_device_bug():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(5, 2)).to("meta")
    report = devicelab.locate(model, torch.randn(2, 3, device="meta"))
    assert report.module is None and report.created is None and report.error is not None


def test_a_dtype_bug_is_not_reported_as_a_device_bug():
    report = devicelab.locate(nn.Linear(3, 4), torch.randn(2, 3, dtype=torch.float64))
    assert report.module is None and report.created is None
    assert "dtype" in str(report.error)


def test_inputs_that_disagree_in_a_pass_that_works_are_not_reported():
    # pack_padded_sequence wants its lengths on the CPU, whatever the device of the sequence
    class Packed(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.rnn = nn.GRU(3, 5, batch_first=True)

        def forward(self, x, lengths):
            return self.rnn(pack_padded_sequence(x, lengths, batch_first=True))[1]

    report = devicelab.locate(Packed(), torch.randn(2, 4, 3), lengths=torch.tensor([4, 2]))
    assert report.ok, str(report)
    report = devicelab.locate(Packed().to("meta"), torch.randn(2, 4, 3, device="meta"), lengths=torch.tensor([4, 2]))
    assert report.ok, str(report)
    # given a list, pack_padded_sequence makes the CPU lengths tensor itself: PyTorch's own code, not a mistake
    report = devicelab.locate(Packed().to("meta"), torch.randn(2, 4, 3, device="meta"), lengths=[4, 2])
    assert report.ok, str(report)


def test_an_input_on_the_cpu_before_the_one_on_the_modules_device_is_not_taken_for_the_input():
    class LengthsFirst(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, lengths, x):
            return self.fc(x)

    model = LengthsFirst().to("meta")
    assert devicelab.locate(model, torch.tensor([4, 2]), x_on("meta")).ok
    report = devicelab.locate(model, torch.tensor([4, 2]), x_on("cpu"))
    assert (report.module, report.tensor, report.argument, report.devices) == ("fc", "weight", "input", (META, CPU))


def test_a_correct_model_is_ok_and_returns_its_output():
    model = Model().to("meta")
    report = devicelab.locate(model, x_on("meta"))
    assert report.ok
    assert (report.module, report.tensor, report.devices, report.created, report.error) == (None,) * 5
    assert report.output.shape == (2, 3) and report.output.device == META
    assert str(report) == "the forward pass ran: no device disagreement found"
    cpu_report = devicelab.locate(Model(), x=x_on("cpu"))
    assert cpu_report.ok and cpu_report.output.device == CPU


def test_keyword_arguments_are_compared_too():
    class TwoInputs(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x, *, extra):
            return self.fc(x + extra)

    report = devicelab.locate(TwoInputs().to("meta"), x_on("meta"), extra=x_on("cpu"))
    assert (report.module, report.argument, report.devices) == ("", "extra", (CPU, META))


def test_a_plain_function_is_watched_for_tensors_it_makes():
    def step(x):
        return x + torch.ones(4)

    report = devicelab.locate(step, x_on("meta"))
    assert report.error is not None and report.module is None
    assert report.created_by == "torch.ones" and report.created_in == ""
    assert report.created.startswith(f"inside {step.__qualname__}, line ")


# --- clean up, never raise ------------------------------------------------------------------------


def test_locate_never_raises_the_models_error_and_removes_every_hook():
    class Broken(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            raise ValueError("my own bug")

    model = nn.Sequential(nn.Linear(4, 4), Broken())
    kept = model[0].register_forward_pre_hook(lambda module, args: None)
    report = devicelab.locate(model, x_on("cpu"))
    assert isinstance(report.error, ValueError) and str(report.error) == "my own bug"
    assert len(model[0]._forward_pre_hooks) == 1 and not model[1]._forward_pre_hooks
    kept.remove()
    assert no_hooks_left(model)
    assert torch._C._len_torch_function_stack() == 0
    assert "my own bug" in str(report)


def test_hooks_and_the_watch_are_removed_after_a_device_error_and_after_success():
    for model, x in ((Model().to("meta"), x_on("cpu")), (Model(), x_on("cpu"))):
        devicelab.locate(model, x)
        assert no_hooks_left(model)
        assert torch._C._len_torch_function_stack() == 0
        assert (torch.zeros(2) + 1).device == CPU


def test_a_second_run_gives_the_same_report():
    model = Model().to("meta")
    first = devicelab.locate(model, x_on("cpu"))
    second = devicelab.locate(model, x_on("cpu"))
    assert (first.module, first.tensor, first.devices) == (second.module, second.tensor, second.devices)


# --- the text, in both languages ------------------------------------------------------------------


def test_the_report_in_chinese():
    messages.set_language("zh")
    report = devicelab.locate(PlainAttribute().to("meta"), x_on("meta"))
    assert str(report).splitlines()[0] == "PlainAttribute：pos 在 cpu 上，输入在 meta 上"
    assert str(report).splitlines()[1].startswith("PyTorch 的报错：RuntimeError: ")
    assert str(devicelab.locate(Model(), x_on("cpu"))) == "前向传播顺利完成：没有发现设备不一致"
    report = devicelab.locate(Recurrent().to("meta"), torch.randn(2, 4, 3, device="meta"))
    line = inspect.getsourcelines(Recurrent.forward)[1] + 1
    assert report.created == f"在 Recurrent.forward 第 {line} 行：torch.zeros → cpu，而输入在 meta 上"
    assert str(report).splitlines()[0] == "rnn：输入 hx 在 cpu 上，其他输入在 meta 上"
    report = devicelab.locate(nn.Conv2d(3, 4, 3).to("meta"), torch.randn(1, 3, 8, 8))
    assert str(report).splitlines()[1].startswith("（这次运行 PyTorch 没有报错")


def test_the_report_is_its_text_in_a_notebook():
    report = devicelab.locate(Model(), x_on("cpu"))
    assert repr(report) == str(report)


def test_a_lazy_module_is_located_after_it_initializes():
    model = nn.Sequential(nn.LazyLinear(3), nn.Linear(3, 2))
    assert devicelab.locate(model, x_on("cpu")).ok
    model = nn.Sequential(nn.LazyLinear(3), nn.Linear(3, 2).to("meta"))
    report = devicelab.locate(model, x_on("cpu"))
    assert (report.module, report.tensor, report.devices) == ("1", "weight", (META, CPU))


# --- on a CUDA GPU (skipped without one) -----------------------------------------------------------
# Evaluated at import: the unit tests' fixture makes torch.cuda.is_available() answer False inside tests.
HAS_CUDA = torch.cuda.is_available()


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")
def test_on_cuda_the_same_reports():
    cuda = torch.zeros(1, device="cuda").device  # cuda:N, the current device
    model = Model().to(cuda)
    report = devicelab.locate(model, x_on("cpu"))
    assert (report.module, report.tensor, report.devices) == ("encoder.layers.0.fc", "weight", (cuda, CPU))
    assert isinstance(report.error, RuntimeError)
    model.encoder.layers[3].norm.norm.to("cpu")
    report = devicelab.locate(model, x_on("cuda"))
    assert str(report).splitlines()[0] == f"encoder.layers.3.norm.norm: weight on cpu, input on {cuda}"
    report = devicelab.locate(nn.Conv2d(3, 4, 3).to(cuda), torch.randn(1, 3, 8, 8))
    assert (report.module, report.tensor, report.devices) == ("", "weight", (cuda, CPU))
    assert "Input type" in str(report.error)
    report = devicelab.locate(Recurrent().to(cuda), torch.randn(2, 4, 3, device=cuda))
    assert (report.created_by, report.created_device) == ("torch.zeros", CPU)
    assert report.created.endswith(f"torch.zeros → cpu while inputs are on {cuda}")
    report = devicelab.locate(SendsToCpu("cpu()").to(cuda), x_on("cuda"))
    assert report.error is None and report.created_by == "torch.Tensor.cpu" and not report.ok
    assert str(report).splitlines()[-1] == "(PyTorch raised no error on this run.)"
    assert devicelab.locate(Model().to(cuda), x_on("cuda")).ok
    assert no_hooks_left(model) and torch._C._len_torch_function_stack() == 0
