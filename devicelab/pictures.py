"""Pictures of where tensors live: one small description per chapter, drawn as inline SVG.

Each chapter has two scenes, before and after its fix. A scene is a list of places (the CPU's memory,
each GPU's memory, the `meta` device, a checkpoint file), the things the chapter is about in each place
(named as the chapter's code names them), and the moves between neighbouring places. `svg(scene, lang)`
draws one scene; `figure(chapter, lang)` draws both, side by side where there is room.

The layout depends only on the description, never on the language: the two languages' pictures differ
in their words alone (tests/unit/test_pictures.py checks it, and that every label fits its box). Colours
come from CSS classes (docs/assets/course.css gives the light and dark palettes); the presentation
attributes are the light palette, for a reader without the stylesheet. Every picture carries a
`<title>` and a `<desc>` that say in words what it draws.
"""

from __future__ import annotations

import dataclasses
import html
import re
import unicodedata

from . import messages

__all__ = ["PICTURES", "Move", "Picture", "Scene", "Thing", "description", "figure", "svg", "text_width"]

# ------------------------------------------------------------------ the descriptions


@dataclasses.dataclass(frozen=True)
class Thing:
    """A tensor, or a group of them, where it lives in a scene.

    `code` is the name the chapter's code gives it (shown in monospace, never translated); `what` a key
    of `picture.what.*`; `mark` is "" (neutral), "bad" (the mistake), "good" (in place after the fix) or
    "gone" (a copy nothing keeps, drawn dashed); `note` an optional key of `picture.note.*`.
    """

    code: str
    what: str
    mark: str = ""
    note: str = ""
    wide: bool = False  # one chip across the whole box (for long names)


@dataclasses.dataclass(frozen=True)
class Place:
    """A memory (or a file) and what the scene shows in it. `absent`: a device this machine lacks."""

    where: str  # cpu | cuda:0 | cuda:1 | meta | file
    things: tuple[Thing, ...] = ()
    absent: bool = False


@dataclasses.dataclass(frozen=True)
class Move:
    """What one line of code moves from one place to the next (`down`: from the upper to the lower box).

    `kind`: "move" (in place), "copy" (a new tensor, kept), "lost" (a new tensor thrown away),
    "load" (read from a file), "fail" (what PyTorch refuses); `note` a key of `picture.move.*`.
    """

    code: str
    kind: str
    note: str
    down: bool = True


@dataclasses.dataclass(frozen=True)
class Scene:
    """Places from top to bottom; `moves[i]` are the moves between place i and place i + 1."""

    places: tuple[Place, ...]
    moves: tuple[tuple[Move, ...], ...] = ()


@dataclasses.dataclass(frozen=True)
class Picture:
    """A chapter's two scenes, and the claims tests (tests/claims) that what they draw is true."""

    chapter: str
    before: Scene
    after: Scene
    backed_by: tuple[str, ...]


def _t(code: str, what: str, mark: str = "", note: str = "", wide: bool = False) -> Thing:
    return Thing(code, what, mark, note, wide)


PICTURES: dict[str, Picture] = {
    "01-devices": Picture(
        "01-devices",
        before=Scene(
            (Place("cpu", (_t("input_data", "batch", "bad", "stayed"), _t("labels", "labels", "bad", "stayed"))),
             Place("cuda:0", (_t("model", "parameters"),
                              _t("input_data.to(device)", "copy", "gone", "thrown_away", True)))),
            ((Move("model.to(device)", "move", "in_place"), Move("input_data.to(device)", "lost", "copy_lost")),),
        ),
        after=Scene(
            (Place("cpu"),
             Place("cuda:0", (_t("model", "parameters"), _t("input_data", "batch", "good"),
                              _t("labels", "labels", "good")))),
            ((Move("model.to(device)", "move", "in_place"),
              Move("input_data = input_data.to(device)", "copy", "copy_kept"),
              Move("labels = labels.to(device)", "copy", "copy_kept")),),
        ),
        backed_by=("test_module_to_moves_parameters_and_buffers_in_place_and_returns_the_module",
                   "test_tensor_to_returns_a_moved_copy_and_leaves_the_original_where_it_was",
                   "test_linear_on_cuda_fed_a_cpu_input_raises_the_addmm_check_naming_mat1"),
    ),
    "02-dataparallel": Picture(
        "02-dataparallel",
        before=Scene(
            (Place("cpu", (_t("model_ft", "parameters", "bad", "left_by_two_ids"),
                           _t("class_weights", "loss_weight", "bad"),
                           _t("net = torch.nn.DataParallel(model_ft)", "wrapper_unused", "", "", True))),
             Place("cuda:0", (_t("inputs", "batch"), _t("labels", "labels")))),
            ((Move("inputs.to(device)", "copy", "copy_kept"),),),
        ),
        after=Scene(
            (Place("cpu"),
             Place("cuda:0", (_t("model_ft", "parameters", "good", "wrapped"),
                              _t("class_weights", "loss_weight", "good", "with_the_loss"),
                              _t("inputs", "batch"), _t("labels", "labels")))),
            ((Move("model_ft = model_ft.to(device)", "move", "in_place"),),),
        ),
        backed_by=("test_cpu_conv_fed_a_cuda_input_raises_input_type_and_weight_type_should_be_the_same",
                   "test_dataparallel_with_one_device_id_moves_the_wrapped_model_to_cuda0_in_place",
                   "test_cross_entropy_with_cpu_weight_on_cuda_logits_raises_naming_weight_until_moved"),
    ),
    "03-embedding": Picture(
        "03-embedding",
        before=Scene(
            (Place("cpu", (_t("token_ids", "ids", "bad", "stayed"), _t("labels", "labels", "bad", "stayed"))),
             Place("cuda:0", (_t("model", "embedding_table"),))),
            ((Move("model.to(device)", "move", "model_only"),),),
        ),
        after=Scene(
            (Place("cpu"),
             Place("cuda:0", (_t("model", "embedding_table"), _t("token_ids", "ids", "good"),
                              _t("labels", "labels", "good")))),
            ((Move("token_ids = token_ids.to(device)", "copy", "copy_kept"),
              Move("labels = labels.to(device)", "copy", "copy_kept")),),
        ),
        backed_by=("test_module_to_moves_the_parameters_not_the_tensors_passed_to_the_model_later",
                   "test_cuda_embedding_fed_cpu_token_ids_raises_the_device_check_naming_index",
                   "test_cpu_labels_into_cross_entropy_with_cuda_logits_raise_naming_target",
                   "test_moving_token_ids_and_labels_to_the_gpu_fixes_both"),
    ),
    "04-batches": Picture(
        "04-batches",
        before=Scene(
            (Place("cpu", (_t('half_moved["features"].dense', "nested", "bad", "one_level_down", True),)),
             Place("cuda:0", (_t("model", "parameters"), _t('half_moved["label"]', "top_level")))),
            ((Move("move_top_level(batch, device)", "copy", "top_only"),),),
        ),
        after=Scene(
            (Place("cpu"),
             Place("cuda:0", (_t("model", "parameters"), _t('batch["features"]', "nested", "good"),
                              _t('batch["label"]', "labels", "good")))),
            ((Move("to_device(batch, device)", "copy", "every_tensor"),),),
        ),
        backed_by=("test_moving_only_the_top_level_of_a_batch_leaves_the_nested_tensors_behind",
                   "test_the_courses_to_device_moves_every_tensor_of_a_nested_batch",
                   "test_the_courses_to_device_keeps_tuples_lists_namedtuples_and_dicts"),
    ),
    "05-inside": Picture(
        "05-inside",
        before=Scene(
            (Place("cpu", (_t("self.mean = mean", "attribute", "bad", "not_moved"),
                           _t("torch.arange", "made_in_forward", "bad", "born_on_cpu"))),
             Place("cuda:0", (_t("self.gru", "parameters"), _t("x", "batch")))),
            ((Move("model.to(device)", "move", "params_buffers_only"),),),
        ),
        after=Scene(
            (Place("cpu"),
             Place("cuda:0", (_t("self.gru", "parameters"), _t("x", "batch"),
                              _t("self.mean", "buffer", "good"),
                              _t("device=x.device", "made_in_forward", "good", "born_with_x")))),
            ((Move("model.to(device)", "move", "params_buffers"),),),
        ),
        backed_by=("test_to_moves_parameters_and_buffers_but_not_plain_tensor_attributes",
                   "test_factory_functions_without_device_make_cpu_tensors",
                   "test_new_zeros_and_zeros_like_take_device_and_dtype_from_the_tensor"),
    ),
    "06-multigpu": Picture(
        "06-multigpu",
        before=Scene(
            (Place("cpu", (_t("model", "parameters", "bad", "never_moved"),)),
             Place("cuda:0", (_t("device_ids[0]", "expected_here"),)),
             Place("cuda:1")),
            ((Move("nn.DataParallel(model)", "fail", "two_ids_no_move"),), ()),
        ),
        after=Scene(
            (Place("cpu", (_t("batch", "batch", "", "may_stay"),)),
             Place("cuda:0", (_t("model", "parameters", "good"), _t("", "batch_part", "", "scatter"))),
             Place("cuda:1", (_t("", "replica", "", "each_call"), _t("", "batch_part", "", "scatter")))),
            ((Move('model.to("cuda:0")', "move", "in_place"), Move("nn.DataParallel(model)", "copy", "split")),
             (Move("nn.DataParallel(model)", "copy", "replicate"),)),
        ),
        backed_by=("test_dataparallel_checks_every_parameter_against_device_ids_0_before_it_scatters",
                   "test_dataparallel_moves_the_model_itself_only_when_it_has_one_device_id",
                   "test_gpu_with_two_gpus_one_device_id_moves_the_model_and_two_do_not"),
    ),
    "07-checkpoints": Picture(
        "07-checkpoints",
        before=Scene(
            (Place("file", (_t("weights.pt", "saved_tensors", "", "saved_on_cuda0"),)),
             Place("cuda:0", absent=True),
             Place("cpu")),
            ((Move("torch.load(weights_path)", "fail", "back_where_saved"),), ()),
        ),
        after=Scene(
            (Place("file", (_t("weights.pt", "saved_tensors", "", "saved_on_cuda0"),)),
             Place("cpu", (_t("state", "state_dict", "good"), _t("model", "parameters", "good")))),
            ((Move("map_location=device", "load", "to_map_location"),),),
        ),
        backed_by=("test_torch_save_records_each_storages_device_and_the_lab_writes_cuda_0",
                   "test_loading_a_cuda_checkpoint_without_a_cuda_gpu_raises_the_is_available_wording",
                   "test_map_location_device_puts_every_tensor_there"),
    ),
    "08-amp": Picture(
        "08-amp",
        before=Scene(
            (Place("cuda:0", (_t("x", "batch", "bad", "float16"), _t("model", "parameters", "", "float32"))),),
        ),
        after=Scene(
            (Place("cuda:0", (_t("x", "batch", "good", "float32"), _t("model", "parameters", "", "float32"),
                              _t("torch.autocast(device_type)", "autocast", "good", "per_operation", True))),),
        ),
        backed_by=("test_a_half_batch_into_a_float_linear_says_mat1_and_mat2",
                   "test_autocast_changes_dtypes_and_moves_nothing",
                   "test_on_cuda_autocast_runs_a_linear_in_float16_and_moves_nothing"),
    ),
    "09-debugging": Picture(
        "09-debugging",
        before=Scene(
            (Place("cpu", (_t("embed.pos", "attribute", "bad", "not_moved"),
                           _t("torch.ones", "made_in_forward", "bad", "born_on_cpu"),
                           _t("exp_avg", "optimizer_state", "bad", "loaded_before_move"))),
             Place("cuda:0", (_t("model", "parameters"), _t("ids", "ids")))),
            ((Move("model.to(device)", "move", "after_load"),),),
        ),
        after=Scene(
            (Place("cpu"),
             Place("cuda:0", (_t("model", "parameters"), _t("ids", "ids"), _t("embed.pos", "buffer", "good"),
                              _t("device=x.device", "made_in_forward", "good", "born_with_x"),
                              _t("exp_avg", "optimizer_state", "good", "loaded_after_move")))),
            ((Move("model = build_model().to(device)", "move", "then_build_then_load"),),),
        ),
        backed_by=("test_to_moves_parameters_and_buffers_but_not_plain_tensor_attributes",
                   "test_factory_functions_without_device_make_cpu_tensors",
                   "test_loading_the_optimizer_before_moving_the_model_leaves_its_state_behind"),
    ),
}

# ------------------------------------------------------------------ the words

messages.add({
    "picture.before": {"en": "Before the fix", "zh": "修复前"},
    "picture.separator": {"en": "; ", "zh": "；"},
    "picture.after": {"en": "After the fix", "zh": "修复后"},
    "picture.caption": {
        "en": "Where each tensor lives, before and after the fix. Red: the mistake; green: where it ends up.",
        "zh": "每个张量在哪里：修复前与修复后。红色是出错之处，绿色是修复后的位置。",
    },
    "picture.title": {"en": "{state}: where each tensor lives", "zh": "{state}：每个张量在哪里"},
    "picture.place.cpu": {"en": "CPU memory (cpu)", "zh": "内存（cpu）"},
    "picture.place.cuda:0": {"en": "GPU 0 memory (cuda:0)", "zh": "GPU 0 的显存（cuda:0）"},
    "picture.place.cuda:1": {"en": "GPU 1 memory (cuda:1)", "zh": "GPU 1 的显存（cuda:1）"},
    "picture.place.meta": {"en": "meta (shapes, no values)", "zh": "meta（只有形状，没有数值）"},
    "picture.place.file": {"en": "checkpoint file on disk", "zh": "磁盘上的检查点文件"},
    "picture.absent": {"en": "missing here", "zh": "这台机器上没有"},
    "picture.empty": {"en": "nothing the step uses", "zh": "训练步骤用到的都不在这里"},
    "picture.what.batch": {"en": "the input batch", "zh": "输入批次"},
    "picture.what.labels": {"en": "the labels", "zh": "标签"},
    "picture.what.ids": {"en": "the token ids", "zh": "词元 id"},
    "picture.what.parameters": {"en": "the model's parameters", "zh": "模型的参数"},
    "picture.what.embedding_table": {"en": "its embedding table", "zh": "它的嵌入表"},
    "picture.what.copy": {"en": "a copy", "zh": "副本"},
    "picture.what.loss_weight": {"en": "the loss's weights", "zh": "损失函数的类别权重"},
    "picture.what.wrapper_unused": {"en": "the wrapper, which the loop never calls",
                                    "zh": "包装器，训练循环从不调用它"},
    "picture.what.nested": {"en": "a tensor one level down", "zh": "下一层的张量"},
    "picture.what.top_level": {"en": "its top-level tensors", "zh": "它最外层的张量"},
    "picture.what.attribute": {"en": "a plain attribute", "zh": "普通张量属性"},
    "picture.what.buffer": {"en": "a buffer", "zh": "缓冲区"},
    "picture.what.made_in_forward": {"en": "made in forward", "zh": "forward 里新建的张量"},
    "picture.what.expected_here": {"en": "the device it checks", "zh": "DataParallel 检查的设备"},
    "picture.what.replica": {"en": "a copy of the model", "zh": "模型的副本"},
    "picture.what.batch_part": {"en": "a part of the batch", "zh": "批次的一部分"},
    "picture.what.saved_tensors": {"en": "the saved tensors", "zh": "保存的张量"},
    "picture.what.state_dict": {"en": "the loaded tensors", "zh": "加载出来的张量"},
    "picture.what.autocast": {"en": "autocast, on the same device", "zh": "autocast，在同一设备上"},
    "picture.what.optimizer_state": {"en": "Adam's running averages", "zh": "Adam 的滑动平均"},
    "picture.note.stayed": {"en": "still here", "zh": "还在这里"},
    "picture.note.thrown_away": {"en": "thrown away", "zh": "被丢掉了"},
    "picture.note.never_moved": {"en": "never moved", "zh": "从没移动过"},
    "picture.note.left_by_two_ids": {"en": "left here (2+ GPUs)", "zh": "多卡时留在这里"},
    "picture.note.wrapped": {"en": "wrapped, same name", "zh": "包装后沿用原名"},
    "picture.note.one_level_down": {"en": "left behind", "zh": "被留下了"},
    "picture.note.not_moved": {"en": "not moved by .to()", "zh": ".to() 不移动它"},
    "picture.note.born_on_cpu": {"en": "no device=: CPU", "zh": "没写 device=：在 CPU"},
    "picture.note.born_with_x": {"en": "made where x is", "zh": "在 x 所在的设备上新建"},
    "picture.note.may_stay": {"en": "may stay here", "zh": "可以留在这里"},
    "picture.note.saved_on_cuda0": {"en": "recorded: cuda:0", "zh": "记录的位置：cuda:0"},
    "picture.note.float16": {"en": "float16 by .half()", "zh": ".half() 成 float16"},
    "picture.note.scatter": {"en": "split at each call", "zh": "每次调用时切分"},
    "picture.note.each_call": {"en": "made at each call", "zh": "每次调用时复制"},
    "picture.note.float32": {"en": "float32", "zh": "float32"},
    "picture.note.per_operation": {"en": "float16 per operation", "zh": "逐个运算用 float16"},
    "picture.note.loaded_before_move": {"en": "loaded before the move", "zh": "在移动之前加载"},
    "picture.note.loaded_after_move": {"en": "loaded after the move", "zh": "在移动之后加载"},
    "picture.move.in_place": {"en": "moves the model in place", "zh": "原地移动模型"},
    "picture.move.copy_lost": {"en": "a copy, thrown away", "zh": "返回副本，但被丢掉了"},
    "picture.move.copy_kept": {"en": "a copy, kept under the name", "zh": "返回副本，并赋回原名"},
    "picture.note.with_the_loss": {"en": "moved with the loss", "zh": "随损失函数一起移动"},
    "picture.move.model_only": {"en": "moves the model, not its inputs", "zh": "只移动模型，不移动输入"},
    "picture.move.top_only": {"en": "nested tensors stay behind", "zh": "嵌套的张量被留下"},
    "picture.move.every_tensor": {"en": "every tensor, containers kept", "zh": "移动每个张量，保留容器类型"},
    "picture.move.params_buffers_only": {"en": "parameters and buffers only", "zh": "只移动参数和缓冲区"},
    "picture.move.params_buffers": {"en": "parameters and buffers", "zh": "移动参数和缓冲区"},
    "picture.move.two_ids_no_move": {"en": "two device ids: no move, error", "zh": "两个设备 id：不移动，报错"},
    "picture.move.split": {"en": "at each call, one part per GPU", "zh": "每次调用，每块 GPU 一份"},
    "picture.move.replicate": {"en": "copies the model, at each call", "zh": "每次调用时复制模型"},
    "picture.move.back_where_saved": {"en": "back where it was saved: error", "zh": "放回保存时的位置：报错"},
    "picture.move.to_map_location": {"en": "every tensor to device", "zh": "每个张量都到 device"},
    "picture.move.after_load": {"en": "after loading the optimizer", "zh": "在加载优化器之后"},
    "picture.move.then_build_then_load": {"en": "then build, then load", "zh": "再建优化器，再加载"},
    "picture.mark.bad": {"en": "the mistake", "zh": "出错之处"},
    "picture.mark.good": {"en": "in place", "zh": "位置正确"},
    "picture.mark.gone": {"en": "kept by nothing", "zh": "没有被保存下来"},
    "picture.desc.place": {"en": "{place}: {things}.", "zh": "{place}：{things}。"},
    "picture.desc.thing": {"en": "{code} ({what}{extra})", "zh": "{code}（{what}{extra}）"},
    "picture.desc.extra": {"en": ", {words}", "zh": "，{words}"},
    "picture.desc.move": {"en": "{code}, from {source} to {target}: {note}.",
                          "zh": "{code}，从{source}到{target}：{note}。"},
})

# ------------------------------------------------------------------ the drawing

WIDTH = 340
PAD = 8            # inside a box
HEADER = 22        # a box's title line
CHIP_H = 50        # a chip: its code, what it is, and a note
GAP = 6
MOVE_H = 32        # one move: code line and words line
CODE_PX = 6.9      # estimated width of a monospace character at 11.5 px
WORD_PX = 5.9      # estimated width of a narrow character at 10.5 px (CJK and full-width: twice)
CHIP_W = (WIDTH - 2 * PAD - GAP) // 2
FILL = {"cpu": "#e8f0fe", "cuda:0": "#e6f4ea", "cuda:1": "#fef7e0", "meta": "#f1f3f4", "file": "#f3e8fd"}
MARK_STROKE = {"bad": "#c5221f", "good": "#188038", "gone": "#5f6368", "": "#5f6368"}
MOVE_STROKE = {"move": "#3c4043", "copy": "#3c4043", "load": "#3c4043", "lost": "#c5221f", "fail": "#c5221f"}


def text_width(text: str, px: float = WORD_PX) -> float:
    """An estimate of `text`'s drawn width: CJK and full-width characters count twice."""
    return sum(px * (2 if unicodedata.east_asian_width(ch) in "WF" else 1) for ch in text)


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _place_name(place: Place, lang: str) -> str:
    name = messages.text(f"picture.place.{place.where}", lang)
    return name + (" — " + messages.text("picture.absent", lang) if place.absent else "")


def _chip_lines(thing: Thing, lang: str) -> tuple[str, str, str]:
    """A chip's three lines: its code (or, without code, what it is), what it is, its note (or "")."""
    what = messages.text(f"picture.what.{thing.what}", lang)
    note = messages.text(f"picture.note.{thing.note}", lang) if thing.note else ""
    if not thing.code:
        return what, note, ""
    return thing.code, what, note


def _chips_layout(things: tuple[Thing, ...]) -> list[tuple[Thing, int, int, int]]:
    """(thing, x, row, width) for each chip: two a row, a wide one alone on its row."""
    laid, row, column = [], 0, 0
    for thing in things:
        if thing.wide and column:
            row, column = row + 1, 0
        width = WIDTH - 2 * PAD if thing.wide else CHIP_W
        laid.append((thing, PAD + column * (CHIP_W + GAP), row, width))
        if thing.wide or column:
            row, column = row + 1, 0
        else:
            column = 1
    return laid


def _box_height(place: Place) -> int:
    laid = _chips_layout(place.things)
    rows = (max(row for _, _, row, _ in laid) + 1) if laid else 0
    return HEADER + max(rows, 1) * (CHIP_H + GAP) + PAD - GAP


def _described(thing: Thing, lang: str) -> str:
    """One thing in words: its code, what it is, its note and its mark."""
    what = messages.text(f"picture.what.{thing.what}", lang)
    words = ([messages.text(f"picture.note.{thing.note}", lang)] if thing.note else []) + (
        [messages.text(f"picture.mark.{thing.mark}", lang)] if thing.mark else [])
    extra = "".join(messages.text("picture.desc.extra", lang, words=w) for w in words)
    if not thing.code:
        return what + extra
    return messages.text("picture.desc.thing", lang, code=thing.code, what=what, extra=extra)


def description(scene: Scene, lang: str) -> str:
    """The scene in words: each place and what it holds, then each move (the picture's <desc>)."""
    sentences = []
    for place in scene.places:
        things = [_described(t, lang) for t in place.things]
        listed = messages.text("picture.separator", lang).join(things) or messages.text("picture.empty", lang)
        sentences.append(messages.text("picture.desc.place", lang, place=_place_name(place, lang), things=listed))
    for index, moves in enumerate(scene.moves):
        upper, lower = scene.places[index], scene.places[index + 1]
        for move in moves:
            source, target = (upper, lower) if move.down else (lower, upper)
            sentences.append(messages.text("picture.desc.move", lang, code=move.code,
                                           source=messages.text(f"picture.place.{source.where}", lang),
                                           target=messages.text(f"picture.place.{target.where}", lang),
                                           note=messages.text(f"picture.move.{move.note}", lang)))
    return _spaced(("" if lang == "zh" else " ").join(sentences))  # Chinese sentences end in 。 and need no space


def _spaced(text: str) -> str:
    """A space between a Chinese character and a Latin letter or digit beside it, as Chinese technical prose has."""
    text = re.sub(r"([\u4e00-\u9fff])([A-Za-z0-9`])", r"\1 \2", text)
    return re.sub(r"([A-Za-z0-9`)])([\u4e00-\u9fff])", r"\1 \2", text)


def svg(scene: Scene, lang: str, ident: str, state: str) -> str:
    """One scene as an inline SVG element; `ident` makes its title and desc ids unique on the page."""
    parts: list[str] = []
    y = 0
    for index, place in enumerate(scene.places):
        height = _box_height(place)
        kind = place.where.replace(":", "")
        dash = ' stroke-dasharray="5 4"' if place.absent else ""
        parts.append(f'<g class="dl-place dl-{kind}"><rect class="dl-box" x="0.5" y="{y + 0.5}" width="{WIDTH - 1}" '
                     f'height="{height}" rx="8" fill="{FILL[place.where]}" stroke="#9aa0a6"{dash}/>'
                     f'<text class="dl-place-name" x="{PAD}" y="{y + 15}" font-size="11.5" font-weight="700" '
                     f'fill="#202124">{_esc(_place_name(place, lang))}</text>')
        if not place.things and not place.absent:
            parts.append(f'<text class="dl-empty" x="{PAD}" y="{y + HEADER + 22}" font-size="10.5" '
                         f'font-style="italic" fill="#5f6368">{_esc(messages.text("picture.empty", lang))}</text>')
        for thing, x, row, width in _chips_layout(place.things):
            top = y + HEADER + row * (CHIP_H + GAP)
            stroke = MARK_STROKE[thing.mark]
            extra = ' stroke-dasharray="4 3"' if thing.mark == "gone" else ""
            thick = "2" if thing.mark in ("bad", "good") else "1"
            sign = {"bad": "✗ ", "good": "✓ "}.get(thing.mark, "")
            first, second, third = _chip_lines(thing, lang)
            font = ('font-family="ui-monospace, SFMono-Regular, Menlo, Consolas, monospace"' if thing.code
                    else 'font-weight="700"')
            parts.append(f'<g class="dl-thing dl-{thing.mark or "plain"}"><rect x="{x}" y="{top}" width="{width}" '
                         f'height="{CHIP_H}" rx="5" fill="#ffffff" stroke="{stroke}" stroke-width="{thick}"{extra}/>'
                         f'<text class="dl-code" x="{x + 7}" y="{top + 15}" font-size="11.5" {font} '
                         f'fill="{stroke if thing.mark else "#202124"}">{_esc(sign + first)}</text>'
                         f'<text class="dl-words" x="{x + 7}" y="{top + 29}" font-size="10.5" fill="#3c4043">'
                         f'{_esc(second)}</text>'
                         f'<text class="dl-note" x="{x + 7}" y="{top + 42}" font-size="10.5" font-style="italic" '
                         f'fill="{stroke if thing.mark == "bad" else "#3c4043"}">{_esc(third)}</text></g>')
        parts.append("</g>")
        y += height
        if index < len(scene.places) - 1:
            moves = scene.moves[index] if index < len(scene.moves) else ()
            gutter = len(moves) * MOVE_H + 6 if moves else 10
            for number, move in enumerate(moves):
                top = y + 4 + number * MOVE_H
                stroke = MOVE_STROKE[move.kind]
                dash = ' stroke-dasharray="3 3"' if move.kind in ("lost", "fail") else ""
                x = 18
                start, end = (top + 2, top + MOVE_H - 4) if move.down else (top + MOVE_H - 4, top + 2)
                tip = -6 if move.down else 6
                parts.append(f'<g class="dl-move dl-{move.kind}"><line x1="{x}" y1="{start}" x2="{x}" y2="{end}" '
                             f'stroke="{stroke}" stroke-width="2"{dash}/>'
                             f'<path d="M{x - 5} {end + tip} L{x} {end} L{x + 5} {end + tip}" fill="none" '
                             f'stroke="{stroke}" stroke-width="2"/>'
                             f'<text class="dl-code" x="{x + 14}" y="{top + 12}" font-size="11.5" '
                             f'font-family="ui-monospace, SFMono-Regular, Menlo, Consolas, monospace" '
                             f'fill="#202124">{_esc(move.code)}</text>'
                             f'<text class="dl-words" x="{x + 14}" y="{top + 26}" font-size="10.5" fill="{stroke}">'
                             f'{"✗ " if move.kind in ("lost", "fail") else ""}'
                             f'{_esc(messages.text(f"picture.move.{move.note}", lang))}</text></g>')
            y += gutter
    title = messages.text("picture.title", lang, state=messages.text(f"picture.{state}", lang))
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" class="dl-picture-scene" viewBox="0 0 {WIDTH} {y + 1}" '
            f'width="{WIDTH}" height="{y + 1}" role="img" aria-labelledby="{ident}-t {ident}-d" '
            f'font-family="system-ui, -apple-system, \'Segoe UI\', Roboto, \'Noto Sans SC\', sans-serif">'
            f'<title id="{ident}-t">{_esc(title)}</title><desc id="{ident}-d">{_esc(description(scene, lang))}</desc>')
    return head + "".join(parts) + "</svg>"


def figure(chapter: str, lang: str) -> str:
    """A chapter's picture: before and after, each with its heading, and one caption (an HTML <figure>)."""
    picture = PICTURES[chapter]
    halves = []
    for state in ("before", "after"):
        scene = getattr(picture, state)
        heading = _esc(messages.text(f"picture.{state}", lang))
        halves.append(f'<div class="dl-picture-half"><p class="dl-picture-state">{heading}</p>'
                      f'{svg(scene, lang, f"dl-{chapter}-{state}", state)}</div>')
    return (f'<figure class="dl-picture" data-search-exclude data-chapter="{chapter}">'
            f'<div class="dl-picture-pair">{"".join(halves)}</div>'
            f'<figcaption>{_esc(messages.text("picture.caption", lang))}</figcaption></figure>')
