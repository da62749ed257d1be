"""The policy net's pass in bfloat16: the rounding, the packed kernels, the products against
numpy's of the rounded numbers (in AVX-512 BF16 where the processor has it), the pass against
float32's, and the precision as the options and the predictor choose it."""
import numpy as np
import pytest

from engine.nets import winograd
from engine.nets.policy import PolicyNet
from engine.nets.predictor import MovePredictor
from engine.nets.winograd import PRECISIONS, WinogradForward, play_forward, precision_of
from engine.nets.winograd_products import (HAS_BF16, bfloat16, pack_bfloat16, point_products_bfloat16,
                                           unpack_bfloat16)
from tests.unit.nets.test_policy_net import SMALL_NETS, trained_like


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            return next(line for line in cpuinfo if line.startswith("flags")).split()
    except (OSError, StopIteration):
        pytest.skip("no /proc/cpuinfo flags to compare with")


def test_bfloat16_rounds_to_the_nearest_and_ties_to_even():
    step = 2.0 ** -7                        # bfloat16's spacing between 1 and 2
    x = np.array([1.0, 1 + step / 2, 1 + 3 * step / 2, 1 + step / 2 + 2.0 ** -20, -1 - 3 * step / 2,
                  0.0, 2.0 ** -130], np.float32)
    assert bfloat16(x).tolist() == [1.0, 1.0, 1 + 2 * step, 1 + step, -1 - 2 * step, 0.0, 2.0 ** -130]
    assert bfloat16(np.float32(3.0e38)).item() == pytest.approx(3.0e38, rel=2.0 ** -8)
    assert (bfloat16(x).view(np.uint32) & 0xFFFF == 0).all()


@pytest.mark.parametrize("depth, cols", [(80, 80), (7, 33), (1, 16), (2, 15)])
def test_packed_kernels_hold_the_rounded_kernels_in_pairs_along_their_depth(depth, cols):
    kernels = np.random.default_rng(depth).standard_normal((3, depth, cols)).astype(np.float32)
    packed = pack_bfloat16(kernels)
    assert packed.dtype == np.uint16 and packed.shape == (3, (depth + 1) // 2, -(-cols // 16) * 16, 2)
    assert np.array_equal(unpack_bfloat16(packed, depth, cols), bfloat16(kernels))
    # kernel[p, 2k + t, j] sits at packed[p, k, j, t], and the padding is zeros
    halves = bfloat16(kernels).view(np.uint32) >> 16
    for p, d, j in ((1, 0, 0), (2, depth - 1, cols - 1), (0, min(1, depth - 1), 3 % cols)):
        assert packed[p, d // 2, j, d % 2] == halves[p, d, j]
    assert not packed[:, :, cols:].any()
    if depth % 2:
        assert not packed[:, -1, :, 1].any()


# rows: whole panels of five and every remainder; columns: 32, 16 and fewer at the end; depths odd
# and even, over and under the 32 numbers a conversion takes
@pytest.mark.parametrize("rows, depth, cols", [(25, 96, 96), (50, 80, 80), (9, 28, 48), (13, 3, 17),
                                               (4, 1, 40), (2, 64, 15), (1, 5, 32), (51, 33, 33),
                                               (7, 65, 70)])
def test_bfloat16_point_products_are_numpys_of_the_rounded_numbers(rows, depth, cols):
    rng = np.random.default_rng(rows * cols + depth)
    windows = rng.standard_normal((6, rows, depth)).astype(np.float32)
    kernels = rng.standard_normal((6, depth, cols)).astype(np.float32)
    out = np.full((6, rows, cols), np.nan, np.float32)
    point_products_bfloat16(windows, pack_bfloat16(kernels), out)
    rounded = np.matmul(bfloat16(windows).astype(np.float64), bfloat16(kernels).astype(np.float64))
    np.testing.assert_allclose(out, rounded, rtol=1e-5, atol=1e-5)
    # and the rounding is really there: float32's products differ by more than the sums' rounding
    exact = np.matmul(windows.astype(np.float64), kernels.astype(np.float64))
    assert np.abs(out - exact).max() > 100 * np.abs(out - rounded).max()


def test_bfloat16_point_products_refuse_shapes_that_do_not_fit():
    windows, packed = np.zeros((4, 5, 8), np.float32), pack_bfloat16(np.zeros((4, 8, 20), np.float32))
    point_products_bfloat16(windows, packed, np.zeros((4, 5, 20), np.float32))
    for out in (np.zeros((4, 5, 33), np.float32), np.zeros((4, 5, 16), np.float32),
                np.zeros((3, 5, 20), np.float32)):
        with pytest.raises(ValueError, match="do not fit"):
            point_products_bfloat16(windows, packed, out)
    with pytest.raises(ValueError, match="do not fit"):
        point_products_bfloat16(np.zeros((4, 5, 10), np.float32), packed, np.zeros((4, 5, 20), np.float32))


def test_bfloat16_products_are_the_processors_where_it_has_avx512_bf16():
    # else the tests above would only have compared numpy with itself
    flags = cpu_flags()
    assert HAS_BF16 == ("avx512f" in flags and "avx512_bf16" in flags)


@pytest.mark.parametrize("first_kernel", [3, 5])
@pytest.mark.parametrize("size", [19, 9])
def test_a_bfloat16_layer_is_the_float32_layer_of_rounded_operands(first_kernel, size, monkeypatch):
    # one layer: through more, a sum rounded the other way moves the next layer's bfloat16s by a
    # step, and the two passes part by about bfloat16's own error (the next test)
    net = PolicyNet({"kind": "conv", "channels": 24, "layers": 1, "first_kernel": first_kernel}, "rich", seed=3)
    x = (np.random.default_rng(size).random((3, net.feature_set.planes, size, size)) < 0.3).astype(np.float32)
    exact, rounded = WinogradForward(net)(x), WinogradForward(net, "bf16")(x)

    def rounded_products(windows, kernels, out):
        np.matmul(bfloat16(windows), bfloat16(kernels), out=np.asarray(out))
    monkeypatch.setattr(winograd, "point_products", rounded_products)
    emulated = WinogradForward(net)(x)
    scale = np.abs(exact).max()
    np.testing.assert_allclose(rounded, emulated, rtol=1e-5, atol=1e-5 * scale)
    assert np.abs(rounded - exact).max() > 1e-3 * scale


@pytest.mark.parametrize("kind, layers", [("conv", 4), ("res", 7)])
def test_a_bfloat16_pass_gives_the_float32_logits_to_a_few_hundredths(kind, layers):
    net = PolicyNet({"kind": kind, "channels": 24, "layers": layers, "first_kernel": 5}, "rich", seed=3)
    x = (np.random.default_rng(layers).random((3, net.feature_set.planes, 19, 19)) < 0.3).astype(np.float32)
    exact, rounded = WinogradForward(net)(x), WinogradForward(net, "bf16")(x)
    assert 1e-3 < np.abs(rounded - exact).max() / np.abs(exact).max() < 0.1


def test_the_precision_is_chosen_by_name():
    assert PRECISIONS == ("fp32", "bf16")
    net = trained_like(*SMALL_NETS[3])
    with pytest.raises(ValueError, match="choose from fp32, bf16"):
        WinogradForward(net, "fp16")
    assert precision_of(play_forward(net, "bf16")) == "bf16"
    assert precision_of(play_forward(net)) == "fp32"
    paper = trained_like(*SMALL_NETS[0])                # no Winograd pass: float32's own
    assert precision_of(play_forward(paper, "bf16")) == "fp32"


def test_a_predictor_in_bfloat16_says_so_and_its_twins_share_its_pass():
    predictor = MovePredictor(trained_like(*SMALL_NETS[2]), 2, precision="bf16")
    assert predictor.description() == "conv 2 x 4, 2 symmetries, bf16"
    twin = predictor.twin(8)
    assert twin.forward is predictor.forward and twin.description().endswith("8 symmetries, bf16")
    assert MovePredictor(trained_like(*SMALL_NETS[2])).description() == "conv 2 x 4, 1 symmetry"
