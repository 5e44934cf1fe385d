"""Divergences from PyTorch that the differential suite found and that are not fixed yet.

Each entry says which divergences it accepts (op, ``kind/what`` of the divergence, value
family, dtype, calling form, and a glob on the detail), what torch and plugrad do, and why
it is not fixed yet; ``example`` is a case that diverges today. ``test_known_still_diverge``
runs every example: an entry whose example stops diverging fails, so the table only shrinks.

An entry marked ``platform`` is a divergence of torch's CPU kernels themselves: which BLAS
kernel or vector width runs (MKL on Intel or AMD, AVX-512 or AVX2) decides between inf, NaN
and a finite value, or the summation order under cancellation. Its example diverges on some
machines and agrees on others, so for it the test asks only that nothing unexplained appears.
"""
from __future__ import annotations

import dataclasses
import fnmatch

from .harness import Case


@dataclasses.dataclass(frozen=True)
class Known:
    ops: tuple        # globs on the op-database name
    match: str        # glob on "kind/what" (kind: wrong, error, accepted)
    torch: str
    plugrad: str
    why: str
    example: Case | None = None
    family: str = "*"
    dtype: str = "*"
    form: str = "*"
    device: str = "*"
    order: str = "*"   # glob on the gradient order (0, 1, 2)
    detail: str = "*"  # glob on the divergence's text (sample name, input, message)
    platform: bool = False  # torch's own answer depends on the CPU it runs on (see above)

    def matches(self, op, case, form, div) -> bool:
        return any(fnmatch.fnmatchcase(op, p) for p in self.ops) and all(
            fnmatch.fnmatchcase(v, p) for v, p in (
                (f"{div.kind}/{div.what}", self.match), (case.family, self.family),
                (case.dtype, self.dtype), (form, self.form), (case.device, self.device),
                (str(case.order), self.order), (div.detail, self.detail)))


KNOWN: list[Known] = [
    # ------------------------------------------------------------ gradients' requires_grad
    Known(("cummax", "cummin"), "wrong/grad-requires_grad", order="1", detail="*empty*",
          torch="the gradient of an empty cummax is the input tensor itself (its backward "
                "returns `self` when numel is 0), so it requires grad even without "
                "create_graph", plugrad="a fresh empty gradient",
          why="a PyTorch quirk (a gradient aliasing its input), not a convention to copy",
          example=Case('cummax', 'cpu', 'float64', sample=4, family='extreme', seed=651,
                       form='method', order=1)),
    # ------------------------------------------------------------ dtypes torch rejects
    Known(("einsum",), "accepted/raise", dtype="bool",
          torch="a bool einsum that contracts an index raises (\"bmm\" not implemented for "
                "'Bool'); one that only sums or takes a diagonal works",
          plugrad="computes every bool einsum",
          why="the other bool products (matmul, mm, bmm, mv, dot, addmm, baddbmm) and "
              "abs/floor/ceil/round/trunc/argmax/argmin/topk/addcmul of bool now raise as "
              "in PyTorch; einsum's rule depends on the equation: pending",
          example=Case('einsum', 'ref', 'bool')),
    # ------------------------------------------------------------ dtypes torch accepts
    Known(("inner",), "error/raise", dtype="bool",
          torch="inner with a 0-d operand is a product and works for bool; with vectors it "
                "raises (no bool kernel)",
          plugrad="refuses bool inner operands of every shape",
          why="deliberate: one rule for every shape (the op database declares a dtype for all "
              "samples or none); the 0-d bool product is mul",
          example=Case('inner', 'cpu', 'bool', sample=11, family='special', seed=305872)),
    Known(("mm", "mv", "bmm", "matmul", "addmm", "baddbmm", "tensordot"), "error/raise",
          dtype="bool",
          torch="a bool product with an empty operand returns an empty (or False) result: "
                "no kernel runs, so nothing checks the dtype",
          plugrad="rejects bool products of every shape",
          why="deliberate: one rule for every shape (the op database's unsupported-dtype "
              "check needs every sample to raise); PyTorch's acceptance is an accident of "
              "its empty fast path",
          example=Case('mv', 'cpu', 'bool', sample=1)),
    Known(("nn.functional.linear",), "error/raise", dtype="bool",
          torch="a bool linear with an empty batch returns an empty result (no kernel "
                "runs); with rows it raises (\"addmm_impl_cpu_\" not implemented for 'Bool')",
          plugrad="rejects bool inputs of every shape",
          why="deliberate, as the bool products below: PyTorch's acceptance is an accident "
              "of its empty fast path",
          example=Case('nn.functional.linear', 'cpu', 'bool', sample=11, family='uniform',
                       seed=831029)),
    Known(("nn.functional.upsample", "nn.functional.upsample_bilinear"), "error/raise",
          dtype="uint8",
          torch="uint8 bilinear/bicubic interpolation: a fixed-point separable kernel "
                "(quantized weights, per-pass rounding and clamping: up to 13 from the "
                "rounded float result)",
          plugrad="raises NotImplementedError (nearest modes of uint8 work)",
          why="copying it needs PyTorch's weight quantization bit for bit; an "
              "approximation would be a wrong result instead of an error",
          example=Case('nn.functional.upsample', 'cpu', 'uint8', sample=3, family='ties',
                       seed=549431)),
    Known(("cumprod", "cumsum"), "error/raise", dtype="bool", form="inplace*",
          detail="*zero-size*",
          torch="cumsum_ / cumprod_ of an empty bool tensor: computed (the in-place form "
                "runs the op in the tensor's own dtype, and an empty one reaches no kernel; "
                "a non-empty one raises \"cumsum_out_cpu\" not implemented for 'Bool')",
          plugrad="raises (the int64 result can't be cast to bool)",
          why="an empty-tensor edge of bool scans, which both refuse otherwise: not worth "
              "a per-op in-place rule",
          example=Case('cumprod', 'cpu', 'bool', sample=10, family='special', seed=745605,
                       form='inplace_view')),
    # ------------------------------------------------------------ dtypes of results
    # ------------------------------------------------------------ special values, kinks
    Known(("addmm", "bmm", "matmul", "mm", "einsum", "baddbmm", "nn.functional.linear",
           "chain_matmul", "linalg.multi_dot", "linalg.matrix_power", "matrix_power",
           "nn.functional.bilinear", "nn.functional.conv1d", "nn.functional.conv2d",
           "nn.functional.conv_transpose1d", "nn.functional.conv_transpose2d",
           "nn.functional.lp_pool1d", "nn.functional.lp_pool2d",
           "nn.functional.scaled_dot_product_attention"), "wrong/*", family="[es]*",
          torch="sums of overflowing products: inf or nan by its BLAS kernel, which MKL picks "
                "by the operands' layout: torch.mm(a, b) is -1.44e308 (the product kept "
                "exact in a fused multiply-add, as NumPy's OpenBLAS) where torch.mm(a, "
                "b.T.contiguous().T) is -inf (rounded first) for the same values",
          plugrad="NumPy's OpenBLAS result for the operands as given: the other of inf / nan "
                  "/ a finite value where a layout makes torch's kernel round differently",
          why="an artefact of which MKL kernel runs (torch's own answer changes with a "
              "transpose, and its CPU and CUDA differ), not a formula; copying it needs "
              "MKL's per-layout kernels",
          example=Case('mm', 'cpu', 'float64', sample=7, family='extreme', seed=1022088,
                       form='method', order=2), platform=True),
    Known(("nn.functional.scaled_dot_product_attention",), "wrong/value", family="special",
          torch="rows with -inf / nan scores: 0 or nan as torch 2.13's softmax gives",
          plugrad="nan", why="report #7 (fully masked rows), with the report entries' helper",
          example=Case('nn.functional.scaled_dot_product_attention', 'cpu', 'float64',
                       sample=4, family='special', seed=60)),
    Known(("var", "var_mean", "std", "std_mean", "nn.functional.adaptive_avg_pool2d",
           "nn.functional.avg_pool2d",
           "nn.functional.layer_norm",
           "nn.functional.batch_norm",
           "nn.functional.normalize"),
          "wrong/*", family="[es]*",
          torch="values near the dtype's maximum: results computed without intermediate "
                "overflow (scaled sums, float32 accumulation for float16)",
          plugrad="an intermediate overflows: inf or nan where torch is finite (or the "
                  "reverse)",
          why="report #8/#11 family (special-value conventions): each op's formula needs "
              "rescaling; edge, ranked after the plain-input bugs. (var_mean/std_mean "
              "values are torch's Welford reduction now; their gradients' mean term, "
              "torch.mean by its vectorised summation order, still overflows differently)",
          example=Case('std_mean', 'cpu', 'float64', sample=5, family='extreme', seed=586781,
                       order=2)),
    Known(("nn.functional.l1_loss",
           "nn.functional.normalize", "nn.functional.layer_norm", "nn.functional.batch_norm",
           "nn.functional.binary_cross_entropy", "nn.functional.binary_cross_entropy_with_logits",
           "nn.functional.bilinear", "rsqrt", "erf",
           "std_mean", "var_mean", "lerp"),
          "wrong/*", family="[sez]*",
          torch="nan / inf / ±0 / subnormal inputs: torch's conventions (the "
                "sign of the subgradient at a kink, nan passed through)",
          plugrad="a different special value or a finite value",
          why="report #8/#13/#14 family (special values and kinks), being settled op by "
              "op with the report entries' helper; each needs a convention decision",
          example=Case('nn.functional.layer_norm', 'cpu', 'float64', sample=2, family='special',
                       seed=576396, order=2)),
    Known(("maximum", "minimum", "nn.functional.normalize"), "wrong/value",
          family="[sez]*",
          torch="the sign of a zero result at a tie of zeros: maximum(0, -0.0) is 0 for a "
                "few elements and -0.0 for 40 (its scalar loop keeps the first operand, its "
                "vector loop the second)",
          plugrad="the backend maximum's tie rule (NumPy keeps the second operand in "
                  "float32/64, the first in float16; the composite the second)",
          why="torch's own answer depends on the tensor's size; only the sign of a zero "
              "differs (values compare equal). relu, relu6, hardtanh and clamp with number "
              "bounds keep x unless it is beyond a bound, as torch's do at every size",
          example=Case('maximum', 'cpu', 'float64', sample=3, family='zeros', seed=16)),
    Known(("nn.functional.binary_cross_entropy_with_logits",), "wrong/grad2", family="ties",
          torch="second derivative at a kink of the tied inputs",
          plugrad="a different subgradient", why="report #14 family (kinks)",
          example=Case('nn.functional.binary_cross_entropy_with_logits', 'ref', 'float64',
                       sample=8, family='ties', seed=147596, order=2)),
    Known(("histc",), "wrong/value", dtype="float16", family="[es]*",
          torch="float16 values near its maximum: the bin arithmetic runs in half, "
                "(x - min) * bins overflows and the bin index is an undefined cast",
          plugrad="bins computed in float64 (the count PyTorch gives for float32)",
          why="undefined behaviour in PyTorch's kernel, not a convention to copy",
          example=Case('histc', 'cpu', 'float16', sample=10, family='special', seed=128013)),
    Known(("logcumsumexp",), "wrong/grad", family="[es]*",
          torch="gradients with -huge / inf / nan inputs in the running sum",
          plugrad="another finite value (the reverse cumulative sum is shifted differently)",
          why="special-value convention of the scan's backward (report #8 family)",
          example=Case('logcumsumexp', 'cpu', 'float64', family='special', order=1)),
    Known(("nn.functional.upsample_bilinear",), "wrong/value", family="[es]*",
          dtype="float64",
          torch="at huge values whose weighted sum w0 x0 + w1 x1 cancels, the residual of "
                "its FMA-contracted kernel (e.g. -1.114e292)",
          plugrad="the residual of the unfused sum (-1.164e292, or 0)",
          why="both are rounding noise of a catastrophic cancellation near the dtype's "
              "maximum; which product PyTorch's compiler fuses is a build artefact",
          example=Case('nn.functional.upsample_bilinear', 'cpu', 'float64', sample=8,
                       family='extreme', seed=572715)),
    # ------------------------------------------------------------ linalg (new this round)
    Known(("linalg.cond",), "accepted/grad", detail="*modified by an inplace operation*",
          torch="backward of cond with p='fro' fails inside torch's own rule (its inv_ex "
                "output is modified in place before backward)",
          plugrad="gives the gradient (checked by gradcheck in the op database)",
          why="a torch bug, not a convention to copy",
          example=Case('linalg.cond', 'cpu', 'float64', sample=3, family='uniform', seed=0,
                       form='fn', order=1)),
    # ------------------------------------------------------------ math ops' torch bugs
    Known(("vander",), "accepted/grad", detail="*modified by an inplace operation*",
          torch="backward of vander fails inside torch's own rule (its cumprod writes in "
                "place into a tensor that rule saved)",
          plugrad="gives the gradient (checked by gradcheck in the op database)",
          why="a torch bug, not a convention to copy",
          example=Case('vander', 'cpu', 'float64', sample=9, family='uniform', seed=902694,
                       order=2)),
    Known(("addbmm", "addr", "chain_matmul"), "wrong/*", family="extreme",
          torch="products and norms that overflow: BLAS's fused multiply-adds (an "
                "overflowing product added to inf stays inf) and torch's own association "
                "decide between inf, nan and a finite value",
          plugrad="the plain products and sums: the other special value",
          why="overflowing intermediates (the extreme family): neither answer is the "
              "mathematical one, both are artefacts of the evaluation order",
          example=Case('addbmm', 'ref', 'float64', sample=2, family='extreme', seed=962418),
          platform=True),
    Known(("renorm",), "wrong/grad2", family="[es]*",
          torch="the second derivative of a slice left unscaled whose norm is nan or inf: "
                "nan (torch's renorm_backward differentiates through the branch its where "
                "did not take)", plugrad="that of the identity (0)",
          why="nan from an unselected branch is an artefact of torch's rule, not worth copying",
          example=Case('renorm', 'cpu', 'float64', sample=12, family='extreme', seed=709887,
                       form='inplace_view', order=2)),
    Known(("orgqr", "linalg.householder_product"), "wrong/grad*", family="[est]*",
          detail="*: torch np.float64(nan) vs plugrad*",
          torch="nan gradients where a reflector I - tau v v^T is singular (tau |v|^2 == 1, "
                "drawn by the ties family) or holds a special value: its rule inverts each "
                "reflector", plugrad="the gradient of the product of the reflectors",
          why="a division by zero inside torch's householder_product_backward, not a "
              "convention to copy",
          example=Case('orgqr', 'cpu', 'float64', sample=2, family='ties', seed=725278,
                       form='method', order=2)),
    Known(("slogdet", "linalg.slogdet", "det", "linalg.det"), "wrong/grad*", family="[es]*",
          torch="gradients at non-finite or huge matrices: g A^-T by an LU solve with its "
                "factors of A^T, NaN spreading through the substitutions' order",
          plugrad="g A^-T by the solve kernel on A (the values at such matrices agree: "
                  "both are those of the LU factors)",
          why="special values of a gradient that is NaN/inf anyway, in another solve order",
          example=Case('det', 'ref', 'float64', sample=6, family='special', seed=805233,
                       form='method', order=1)),
    Known(("matrix_exp", "linalg.matrix_exp"), "error/raise", dtype="float16",
          torch="computes a float16 result on CPU, and a wrong one: exp([[1, 2], [3, 4]]) is "
                "[[inf, -inf], [-inf, inf]] in half (NaN for the batch of this example)",
          plugrad="raises (low precision dtypes not supported, as PyTorch's CUDA check)",
          why="a torch bug (its half kernel), not a result to copy",
          example=Case('linalg.matrix_exp', 'cpu', 'float16', sample=3, family='zeros',
                       seed=511786)),
    Known(("linalg.solve", "linalg.tensorsolve", "linalg.cond", "cholesky_solve"), "*",
          family="[es]*",
          torch="solves at NaN / inf / huge inputs: a pivot MKL's fused multiply-adds leave as "
                "a rounding residue (-7.4e290, a solution of 1.4e291) where the unfused "
                "elimination cancels it to 0 (then singular); gradients by its rules' solves",
          plugrad="the same LU composite and substitutions without fused multiply-adds; "
                  "gradients by the solve kernel",
          why="rounding residues of catastrophic cancellation near the dtype's maximum (MKL's "
              "FMA, as cross below) and special values of gradients through them",
          example=Case('linalg.solve', 'cpu', 'float64', sample=2, family='extreme',
                       seed=415319)),
    Known(("linalg.lstsq",), "*", family="[es]*",
          torch="gelsy (QR with column pivoting) at NaN / inf / huge inputs: its rank and "
                "special values; an INTERNAL ASSERT (illegal argument) for some NaN inputs",
          plugrad="the minimum-norm solution by the pseudo-inverse: other special values "
                  "(the rank is gelsy's: of the scaled matrix, 1 at inf / NaN)",
          why="a rank-revealing factorisation of non-finite input is implementation-defined; "
              "the INTERNAL ASSERT is a torch bug",
          example=Case('linalg.lstsq', 'cpu', 'float32', sample=6, family='special',
                       seed=549741)),
    Known(("linalg.svd", "svd", "linalg.svdvals", "linalg.eigh", "linalg.eigvalsh", "pinverse",
           "linalg.pinv", "nuclear_norm", "linalg.matrix_norm", "linalg.norm"), "*",
          family="[es]*", device="ref",
          torch="LAPACK's syevd fails to converge on huge finite input (near the dtype's "
                "maximum: LinAlgError, ill-conditioned) and has its own special values at "
                "non-finite entries (a NaN diagonal gives eigenvalues 0 and -0); gesdd's "
                "values near the maximum",
          plugrad="the reference backend's Jacobi iterations compute a result (svd's NaN / "
                  "inf inputs give PyTorch's LinAlgError / NaN on every backend)",
          why="convergence failure and special values of LAPACK's iterations, not a "
              "property of the input the reference backend can test (cpu agrees)",
          example=Case('linalg.eigvalsh', 'ref', 'float32', sample=1, family='extreme',
                       seed=336773)),
    Known(("qr", "linalg.qr"), "error/grad*", family="z*",
          torch="the gradient of a rank-deficient R: inf / NaN from its triangular solve",
          plugrad="raises LinAlgError (singular) in the rule's solve",
          why="rank-deficient QR is not differentiable; pending a triangular solve that does "
              "not check",
          example=Case('qr', 'cpu', 'float64', sample=15, family='zeros', seed=739922,
                       order=2)),
    Known(("linalg.householder_product", "orgqr"), "wrong/value", family="extreme",
          torch="reflectors whose products overflow: inf or NaN by LAPACK's dlarf (a gemv "
                "and a rank-one update in BLAS's order)",
          plugrad="the same reflections (dlarf's skipping of tau == 0 and of trailing zero "
                  "rows and columns included) in NumPy's order: the other of inf / NaN",
          why="overflowing intermediates: artefacts of the evaluation order, as mm above",
          example=Case('linalg.householder_product', 'cpu', 'float64', sample=2,
                       family='extreme', seed=112960), platform=True),
    Known(("nn.functional.conv_transpose1d", "nn.functional.conv_transpose2d",
           "nn.functional.conv1d", "nn.functional.conv2d"), "wrong/value", dtype="float16",
          torch="float16 convolutions accumulated in float32 in its kernel's order, rounded "
                "once: under cancellation (the ties family's equal terms) a sum of terms near "
                "2 that ends near 0.02 keeps the float16 rounding of the terms (1e-3 apart)",
          plugrad="NumPy's float32 GEMM over the same terms in another order",
          why="the summation order of a cancelling sum, not a formula; torch's own order "
              "changes with its CPU kernel (the AVX2 machine's differs, the AVX-512 one's "
              "agrees)",
          example=Case('nn.functional.conv_transpose2d', 'cpu', 'float16', sample=0,
                       family='ties', seed=53524), platform=True),
    Known(("nn.functional.gelu", "gelu"), "wrong/*", family="[es]*",
          dtype="float[13]*", detail="*torch np.float*(nan) vs plugrad np.float*(inf)*",
          torch="gelu(+inf) in float32/float16: NaN with its AVX-512 kernel, inf with AVX2",
          plugrad="inf, as torch's float64 kernel and its AVX2 one",
          why="the CPU's vector kernel, not a convention (docs/conventions.md)",
          example=Case('nn.functional.gelu', 'cpu', 'float32', sample=0, family='special',
                       seed=0), platform=True),
    # ------------------------------------------------------------ nn ops (new this round)
    Known(("nn.functional.cosine_embedding_loss",
           "nn.functional.hinge_embedding_loss",
           "cosine_similarity", "pairwise_distance",
           "nn.functional.group_norm", "nn.functional.instance_norm",
           "nn.functional.local_response_norm",
           "nn.functional.multilabel_margin_loss",
           "nn.functional.poisson_nll_loss",
           "nn.functional.hardswish", "nn.functional.softshrink",
           "nn.functional.triplet_margin_loss",
           "nn.functional.triplet_margin_with_distance_loss"), "wrong/*", family="[esz]*",
          torch="nan / inf / huge / ±0 inputs: torch's special values (overflow-free norms, "
                "hardswish of ±inf, margins of inf)",
          plugrad="nan, a clamped finite value, or another special value",
          why="found by this suite in the nn ops landed this round (report #8 family); "
              "for their author",
          example=Case('nn.functional.hardswish', 'cpu', 'float64', sample=5, family='extreme',
                       seed=22414, order=2)),
    Known(("cdist", "pdist", "nn.functional.local_response_norm",
           "nn.functional.multi_margin_loss", "nn.functional.multilabel_margin_loss",
           "nn.functional.avg_pool3d", "nn.functional.lp_pool3d", "nn.functional.ctc_loss"),
          "accepted/raise", dtype="float16",
          torch="no float16 kernel on CPU (\"cdist\" not implemented for 'Half'; CUDA has one)",
          plugrad="computes in float16",
          why="PyTorch's CPU gap, not a contract: rejecting float16 here would make "
              "plugrad's cpu device differ from torch on CUDA; decision pending",
          example=Case('cdist', 'cpu', 'float16', seed=45250)),
    Known(("nn.functional.conv3d", "nn.functional.conv_transpose3d"), "wrong/*",
          family="[es]*",
          torch="inf or nan by its kernels' accumulation order; its grouped, strided conv3d "
                "kernel leaves an output made of zero padding only at 0 even under a "
                "non-finite weight, while its plain one multiplies the padding (nan: "
                "F.conv3d(ones(1,1,2,2), w with an inf, padding=1))",
          plugrad="the 2-D kernels' order over depth taps; padding always multiplied (nan)",
          why="which of inf/nan, and whether zero padding meets a non-finite weight, "
              "depends on the CPU kernel torch picks (as conv1d/conv2d above): not a "
              "convention to copy",
          example=Case('nn.functional.conv3d', 'cpu', 'float32', sample=13, family='special',
                       seed=410179)),
    Known(("nn.functional.grid_sample",), "wrong/grad*", family="[es]*",
          torch="the grid's (and at NaN weights the input's) gradient by its kernel's "
                "per-corner formulas and clipping multipliers: at NaN/inf/huge coordinates "
                "or values, its own pattern of inf, nan and 0",
          plugrad="the composed graph's (where/mul/floor): another of inf, nan and 0 there",
          why="special-value gradients of a sampling kernel (report #8 family); the values "
              "now agree at NaN, inf and huge coordinates in every padding mode",
          example=Case('nn.functional.grid_sample', 'cpu', 'float64', sample=11,
                       family='special', seed=984993, order=1)),
    Known(("nn.functional.grid_sample",), "wrong/value", family="[es]*", dtype="float16",
          detail="*nearest*",
          torch="float16 (its scalar fallback kernel): a nearest coordinate that is NaN or "
                "infinite is cast to an integer (undefined behaviour in C++) and reads row "
                "or column 0", plugrad="outside the input: 0 (as torch's float32/float64 "
                                       "kernels give)",
          why="undefined behaviour of PyTorch's half kernel, not a convention to copy",
          example=Case('nn.functional.grid_sample', 'cpu', 'float16', sample=3,
                       family='special', seed=37899)),
    Known(("nn.functional.ctc_loss",), "wrong/grad", family="[es]*",
          torch="gradients of a sample whose loss is near the float maximum or whose "
                "log-probs hold -inf/huge values: its kernel's exp(alpha + beta - lp + nll)",
          plugrad="the autograd of the log-space recursion plus exp(lp): other finite "
                  "values or 0 where torch's exponentials overflow",
          why="special-value edge of the CTC kernel (report #8 family); ordinary, NaN and "
              "impossible-alignment gradients agree",
          example=Case('nn.functional.ctc_loss', 'ref', 'float64', sample=9, family='extreme',
                       seed=297248, order=1)),
]


def known_for(op, case, form, div):
    return next((k for k in KNOWN if k.matches(op, case, form, div)), None)
