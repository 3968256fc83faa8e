"""devicelab.audit: every kind of misplaced tensor, by qualified name, with `meta` standing in for the GPU."""

import functools
import time
from collections import namedtuple

import pytest
import torch
from torch import nn

import devicelab
from devicelab import messages
from devicelab.debug import AuditReport, Entry

META = torch.device("meta")
CPU = torch.device("cpu")


class Norm(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(4)
        self.scale = torch.ones(4)  # a plain tensor attribute: `.to()` leaves it where it is

    def forward(self, x):
        return self.norm(x) * self.scale


class Layer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.norm = Norm()

    def forward(self, x):
        return self.norm(self.fc(x))


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(4))
        self.register_buffer("mask", torch.ones(4))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x * self.mask


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = Encoder()
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        return self.head(self.encoder(x))


def on_meta() -> Model:
    """A model whose parameters and buffers are on `meta`, with its plain tensor attributes moved as well."""
    model = Model().to("meta")
    for layer in model.encoder.layers:
        layer.norm.scale = layer.norm.scale.to("meta")
    return model


def names(report: AuditReport) -> list[str]:
    return [entry.name for entry in report.odd]


# --- the report -------------------------------------------------------------------------------------


def test_a_model_in_place_is_ok_and_lists_every_tensor_once():
    model = on_meta()
    report = devicelab.audit(model)
    assert report.ok and report.odd == []
    assert report.expected == META
    listed = [entry.name for entry in report.entries]
    assert len(listed) == len(set(listed))
    assert {name for name, _ in model.named_parameters()} <= set(listed)
    assert {name for name, _ in model.named_buffers()} <= set(listed)
    assert "encoder.layers.3.norm.scale" in listed
    assert report.verdict == f"All {len(listed)} tensors are on meta."


def test_entries_say_name_kind_device_shape_and_dtype():
    report = devicelab.audit(on_meta())
    entry = report["encoder.layers.3.fc.weight"]
    assert entry == Entry("encoder.layers.3.fc.weight", "parameter", META, (4, 4), torch.float32, False)
    assert report["encoder.mask"].kind == "buffer"
    assert report["encoder.layers.0.norm.scale"].kind == "attribute"
    with pytest.raises(KeyError):
        report["no.such.tensor"]


def test_a_parameter_left_behind_is_odd():
    model = on_meta()
    model.encoder.layers[3].norm.norm.weight = nn.Parameter(torch.ones(4))
    report = devicelab.audit(model)
    assert names(report) == ["encoder.layers.3.norm.norm.weight"]
    assert report.odd[0].kind == "parameter" and report.odd[0].device == CPU
    assert not report.ok


def test_a_buffer_left_behind_is_odd():
    model = on_meta()
    model.encoder.mask = torch.ones(4)  # assigning to a buffer's name replaces the buffer
    report = devicelab.audit(model)
    assert names(report) == ["encoder.mask"]
    assert report.odd[0].kind == "buffer"


def test_a_plain_tensor_attribute_deep_in_the_model_is_found():
    model = Model().to("meta")  # .to() moves parameters and buffers, not the four `scale` attributes
    report = devicelab.audit(model)
    assert names(report) == [f"encoder.layers.{i}.norm.scale" for i in range(4)]
    assert {entry.kind for entry in report.odd} == {"attribute"}


def test_tensors_in_lists_tuples_and_dicts_held_by_modules_are_named_by_their_path():
    model = on_meta()
    layer = model.encoder.layers[0]
    layer.cache = [None, torch.zeros(2), (torch.zeros(1, 2), {"k": torch.zeros(3)})]
    model.table = {"a": torch.zeros(2), 7: torch.zeros(2, device="meta")}
    report = devicelab.audit(model)
    assert names(report) == [
        "table['a']",
        "encoder.layers.0.cache[1]",
        "encoder.layers.0.cache[2][0]",
        "encoder.layers.0.cache[2][1]['k']",
    ]
    assert report["table[7]"].odd is False


def test_layers_kept_in_a_plain_list_are_found_and_not_moved_by_to():
    model = Model()
    model.extra = [nn.Linear(4, 4)]  # a plain list: not registered, so .to() skips it
    model.to("meta")
    for layer in model.encoder.layers:
        layer.norm.scale = layer.norm.scale.to("meta")
    report = devicelab.audit(model)
    assert names(report) == ["extra[0].weight", "extra[0].bias"]
    assert {entry.kind for entry in report.odd} == {"attribute"}


def test_a_tensor_held_twice_is_listed_once_under_its_registered_name():
    model = on_meta()
    model.tied = [model.head.weight, model.encoder.mask]
    model.encoder.layers[1].fc = model.encoder.layers[0].fc  # a shared layer
    report = devicelab.audit(model)
    listed = [entry.name for entry in report.entries]
    assert len(listed) == len(set(listed))
    assert not any(name.startswith("tied") for name in listed)
    assert "encoder.layers.1.fc.weight" not in listed
    assert len(report.entries) == len({id(t) for t in [*model.parameters(), *model.buffers()]}) + 4


def test_an_rnn_lists_its_weights_once():
    rnn = nn.LSTM(3, 5, num_layers=2).to("meta")
    report = devicelab.audit(rnn)
    assert [entry.name for entry in report.entries] == [name for name, _ in rnn.named_parameters()]
    assert report.ok


def test_a_zero_dim_cpu_tensor_is_listed_but_not_odd():
    model = on_meta()
    model.temperature = torch.tensor(2.0)
    report = devicelab.audit(model)
    assert report["temperature"].device == CPU
    assert report.ok


def test_pytorch_accepts_a_zero_dim_cpu_tensor_beside_another_device():
    # the reason a 0-dim CPU tensor (Adam's `step`) is not odd: PyTorch reads it as a number
    assert (torch.ones(3, device="meta") * torch.tensor(2.0)).device == META
    with pytest.raises(RuntimeError):
        torch.ones(3, device="meta") * torch.ones(3)


def test_a_shape_or_dtype_bug_is_not_a_device_bug():
    model = on_meta()
    model.head = nn.Linear(5, 3).to(device="meta", dtype=torch.float64)  # wrong in_features, wrong dtype
    batch = (torch.zeros(2, 7, device="meta", dtype=torch.int32),)
    report = devicelab.audit(model, batch=batch)
    assert report.ok
    assert report["head.weight"].dtype == torch.float64 and report["head.weight"].shape == (3, 5)


# --- optimizer, criterion, batch -------------------------------------------------------------------


def stepped_adam(model: nn.Module) -> torch.optim.Adam:
    optimizer = torch.optim.Adam(model.parameters())
    for param in model.parameters():
        param.grad = torch.zeros_like(param)
    optimizer.step()
    return optimizer


def test_optimizer_state_is_named_after_the_parameter_and_adams_step_is_not_odd():
    model = on_meta()
    optimizer = stepped_adam(model)
    report = devicelab.audit(model, optimizer=optimizer)
    assert report.ok
    step = report["optimizer.state[head.weight].step"]
    assert step.device == CPU and step.shape == ()
    assert report["optimizer.state[encoder.layers.2.fc.bias].exp_avg_sq"].device == META


def test_optimizer_state_on_the_wrong_device_is_odd():
    model = on_meta()
    optimizer = stepped_adam(model)
    optimizer.state[model.encoder.layers[1].fc.weight]["exp_avg"] = torch.zeros(4, 4)  # loaded on the CPU
    report = devicelab.audit(model, optimizer=optimizer)
    assert names(report) == ["optimizer.state[encoder.layers.1.fc.weight].exp_avg"]
    assert report.odd[0].kind == "optimizer"


def test_parameters_the_model_does_not_hold_are_named_by_their_index():
    model = on_meta()
    stray = nn.Parameter(torch.zeros(2))
    optimizer = torch.optim.SGD([*model.head.parameters(), stray], lr=0.1, momentum=0.9)
    optimizer.state[stray]["momentum_buffer"] = torch.zeros(2)
    report = devicelab.audit(model, optimizer=optimizer)
    assert names(report) == ["optimizer.params[2]", "optimizer.state[2].momentum_buffer"]


def test_tensor_hyperparameters_of_the_optimizer_are_listed():
    model = on_meta()
    optimizer = torch.optim.SGD(model.parameters(), lr=torch.tensor(0.1))
    report = devicelab.audit(model, optimizer=optimizer)
    assert report["optimizer.param_groups[0]['lr']"].kind == "optimizer"


def test_criterion_buffers_are_found():
    model = on_meta()
    report = devicelab.audit(model, criterion=nn.CrossEntropyLoss(weight=torch.ones(3)))
    assert names(report) == ["criterion.weight"]
    assert report.odd[0].kind == "criterion"
    bce = nn.BCEWithLogitsLoss(pos_weight=torch.ones(3, device="meta"))
    assert devicelab.audit(model, criterion=bce).ok


def test_a_criterion_made_with_partial_is_found():
    model = on_meta()
    criterion = functools.partial(nn.functional.cross_entropy, weight=torch.ones(3))
    report = devicelab.audit(model, criterion=criterion)
    assert names(report) == ["criterion.keywords['weight']"]
    assert devicelab.audit(model, criterion=nn.functional.cross_entropy).ok


Batch = namedtuple("Batch", "tokens labels")


@pytest.mark.parametrize(
    ("batch", "odd"),
    [
        (torch.zeros(2, 4), ["batch"]),
        ((torch.zeros(2, 4), torch.zeros(2, device="meta")), ["batch[0]"]),
        ([torch.zeros(2, 4, device="meta"), torch.zeros(2)], ["batch[1]"]),
        ({"inputs": torch.zeros(2, 4, device="meta"), "labels": torch.zeros(2)}, ["batch['labels']"]),
        (Batch(torch.zeros(2, 4), torch.zeros(2, device="meta")), ["batch.tokens"]),
        (
            (torch.zeros(2, 4, device="meta"), {"mask": torch.zeros(2), "ids": [torch.zeros(2)]}),
            ["batch[1]['mask']", "batch[1]['ids'][0]"],
        ),
        (Batch({"x": torch.zeros(1)}, [torch.zeros(1, device="meta")]), ["batch.tokens['x']"]),
    ],
)
def test_batch_leaves_are_named_by_their_path(batch, odd):
    report = devicelab.audit(on_meta(), batch=batch)
    assert names(report) == odd
    assert {entry.kind for entry in report.odd} == {"batch"}


def test_a_batch_of_plain_numbers_and_strings_has_no_tensor_entries():
    model = on_meta()
    report = devicelab.audit(model, batch={"text": "hello", "n": 3, "x": torch.zeros(1, device="meta")})
    assert [entry.name for entry in report.entries if entry.kind == "batch"] == ["batch['x']"]


# --- which device is expected ---------------------------------------------------------------------


def test_expected_is_where_most_of_the_parameters_are():
    model = Model()
    model.encoder.to("meta")  # most elements on meta, the head on the CPU
    report = devicelab.audit(model)
    assert report.expected == META
    assert names(report)[-2:] == ["head.weight", "head.bias"]
    model = Model()
    model.head.to("meta")
    assert devicelab.audit(model).expected == CPU


def test_on_a_tie_expected_is_the_device_that_is_not_the_cpu():
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    model[1].to("meta")
    assert devicelab.audit(model).expected == META


def test_a_model_without_parameters_expects_its_buffers_device_then_the_cpu():
    model = nn.Module()
    assert devicelab.audit(model).expected == CPU
    model.register_buffer("table", torch.zeros(3, device="meta"))
    assert devicelab.audit(model).expected == META


@pytest.mark.parametrize("expected", ["cpu", torch.device("cpu")])
def test_expected_can_be_given(expected):
    report = devicelab.audit(on_meta(), expected=expected)
    assert report.expected == CPU
    assert len(report.odd) == len(report.entries)


def test_expected_cuda_without_an_index_means_cuda_0():
    report = devicelab.audit(Model(), expected="cuda")
    assert report.expected == torch.device("cuda", 0)
    assert not report.ok
    assert report.verdict.startswith(f"{len(report.entries)} tensors are not on cuda:0: encoder.mask, encoder.layers.0")


# --- reading devices only -------------------------------------------------------------------------


def test_audit_copies_nothing(monkeypatch):
    model = Model()
    model.to("meta")
    optimizer = stepped_adam(model)
    before = {name: param for name, param in model.named_parameters()}

    def forbidden(*args, **kwargs):
        raise AssertionError("audit must not move, copy or read values")

    for method in ("to", "cpu", "cuda", "item", "tolist", "clone", "numpy", "__array__"):
        monkeypatch.setattr(torch.Tensor, method, forbidden)
    report = devicelab.audit(model, batch=torch.zeros(2, 4), optimizer=optimizer, criterion=nn.CrossEntropyLoss())
    monkeypatch.undo()
    assert len(report.entries) > 0
    assert all(param is before[name] and param.device == META for name, param in model.named_parameters())


def test_audit_of_a_100_million_parameter_model_is_fast():
    # on `meta` the tensors hold no memory; audit reads only their devices, shapes and dtypes
    with torch.device("meta"):
        model = nn.Sequential(nn.Embedding(32_000, 768), *[nn.Linear(768, 768) for _ in range(150)])
    assert sum(param.numel() for param in model.parameters()) > 100_000_000
    start = time.perf_counter()
    report = devicelab.audit(model)
    assert time.perf_counter() - start < 1.0
    assert report.ok and len(report.entries) == 301


# --- the text, in both languages ------------------------------------------------------------------


def test_the_table_marks_odd_rows_and_ends_with_the_verdict():
    model = Model().to("meta")
    text = str(devicelab.audit(model, batch=torch.zeros(2, 4)))
    lines = text.splitlines()
    assert lines[0].split() == ["name", "|", "kind", "|", "device", "|", "shape", "|", "dtype"]
    odd_rows = [line for line in lines if line.startswith("✗ ")]
    assert len(odd_rows) == 5
    assert odd_rows[0].split(" | ")[0].split() == ["✗", "encoder.layers.0.norm.scale"]
    assert "attribute | cpu" in odd_rows[0] and "(4,)" in odd_rows[0] and "float32" in odd_rows[0]
    assert lines[-1] == (
        "5 tensors are not on meta: encoder.layers.0.norm.scale, encoder.layers.1.norm.scale, "
        "encoder.layers.2.norm.scale, encoder.layers.3.norm.scale, batch"
    )


def test_a_long_table_shows_every_odd_row_and_says_how_many_it_left_out():
    model = nn.Sequential(*[nn.Linear(2, 2) for _ in range(100)]).to("meta")
    model[77].bias = nn.Parameter(torch.zeros(2))
    model[99].weight = nn.Parameter(torch.zeros(2, 2))
    report = devicelab.audit(model)
    lines = str(report).splitlines()
    assert "77.bias" in str(report) and "99.weight" in str(report)
    shown = [line for line in lines if line.startswith(("✗ ", "  ")) and " | " in line][1:]
    assert len(shown) == 32
    assert "… and 168 more tensors in place, not shown" in lines[-2]
    assert lines[-1] == "2 tensors are not on meta: 77.bias, 99.weight"


def test_the_verdict_names_five_and_counts_the_rest():
    model = nn.Sequential(*[nn.Linear(2, 2) for _ in range(4)])
    report = devicelab.audit(model, expected="meta")
    assert report.verdict == "8 tensors are not on meta: 0.weight, 0.bias, 1.weight, 1.bias, 2.weight and 3 more"
    model.to("meta")
    model[2].bias = nn.Parameter(torch.zeros(2))
    assert devicelab.audit(model).verdict == "1 tensor is not on meta: 2.bias"


def test_the_report_in_chinese():
    model = Model().to("meta")
    messages.set_language("zh")
    report = devicelab.audit(model, batch=(torch.zeros(2, 4, device="meta"), torch.zeros(2)))
    lines = str(report).splitlines()
    assert lines[0].split() == ["名称", "|", "类别", "|", "设备", "|", "形状", "|", "dtype"]
    assert any(line.startswith("✗ batch[1]") and "批次" in line for line in lines)
    assert any("普通属性" in line for line in lines)
    assert lines[-1] == (
        "有 5 个张量不在 meta 上：encoder.layers.0.norm.scale、encoder.layers.1.norm.scale、"
        "encoder.layers.2.norm.scale、encoder.layers.3.norm.scale、batch[1]"
    )
    everything = devicelab.audit(on_meta())
    assert everything.verdict == f"全部 {len(everything.entries)} 个张量都在 meta 上。"


def test_chinese_columns_line_up():
    messages.set_language("zh")
    lines = devicelab.audit(Model().to("meta")).table().splitlines()
    bars = {line.index("|") + sum(1 for char in line[: line.index("|")] if ord(char) > 0x2E80) for line in lines[2:]}
    assert len(bars) == 1


def test_the_report_is_its_table_in_a_notebook():
    report = devicelab.audit(on_meta())
    assert repr(report) == str(report)
    assert report.devices == {META: len(report.entries)}


def test_an_empty_report():
    report = devicelab.audit(nn.ReLU())
    assert report.ok and report.entries == []
    assert report.verdict == "No tensors found: nothing to check."


def test_a_lazy_module_before_its_first_forward_pass():
    model = nn.Sequential(nn.LazyLinear(3), nn.Linear(3, 2))
    report = devicelab.audit(model)
    assert report.ok and report["0.weight"].shape == ()
    assert len(devicelab.audit(model, expected="meta").odd) == 4


# --- on a CUDA GPU (skipped without one) -----------------------------------------------------------
# Evaluated at import: the unit tests' fixture makes torch.cuda.is_available() answer False inside tests.
HAS_CUDA = torch.cuda.is_available()


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")
def test_on_cuda_the_same_report():
    cuda = torch.zeros(1, device="cuda").device  # cuda:N, the current device
    model = Model().to("cuda")  # the four `scale` attributes stay on the CPU
    optimizer = stepped_adam(model)
    optimizer.state[model.head.weight]["exp_avg"] = optimizer.state[model.head.weight]["exp_avg"].cpu()
    report = devicelab.audit(model, batch={"x": torch.zeros(2, 4)}, optimizer=optimizer)
    assert report.expected == cuda
    assert report["optimizer.state[head.weight].step"].device == CPU  # Adam keeps `step` on the CPU
    assert names(report) == [
        *(f"encoder.layers.{i}.norm.scale" for i in range(4)),
        "optimizer.state[head.weight].exp_avg",
        "batch['x']",
    ]
    assert devicelab.audit(model, expected="cuda").expected == cuda
