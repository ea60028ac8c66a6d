"""Unit tests for the text parsers: compiler/parse/_text.py (graph breaks, recompile reasons, guard
trees, Inductor output code) and compiler/parse/_graphs.py (the FX graph code torch prints).

The texts below are copied from real logs: torch 2.13 on CPU (recorded in-process here; paths
are /tmp/*.py scripts) and the torch 2.11 H100 fixture (tests/fixtures/traces). Long parts are
shortened (torch's own traceback, kernel bodies, Inductor's metadata), the rest is verbatim.
"""

from __future__ import annotations

import json

import pytest

from compiler.parse import _graphs, _modules, _outputcode, _text

# torch 2.13: a print() inside an inlined helper (dynamo_graph_break_reason payload)
GRAPH_BREAK_213 = """\
Graph break in user code at /tmp/gb.py:11
Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):

Failed to trace builtin operator
  Explanation: Dynamo does not know how to trace builtin operator `print` with argument types ['str'] (has_kwargs False)
  Hint: Avoid calling builtin `print` with argument types ['str']. Consider using an equivalent alternative function/method to `print`.
  Hint: If you are attempting to call a logging function (e.g. `print`), you can try adding it to `torch._dynamo.config.reorderable_logging_functions`.
  Hint: Please report an issue to PyTorch.

  Developer debug context: builtin print [<class 'torch._dynamo.variables.constant.ConstantVariable'>] False

 For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html

User code traceback:
  File "/tmp/gb.py", line 17, in <module>
    torch.compile(f, backend="eager")(torch.randn(4))
  File "/tmp/gb.py", line 15, in f
    y = helper(y)
        ^^^^^^^^^
  File "/tmp/gb.py", line 11, in helper
    print("hi")

Traceback (most recent call last):
  File "/work/main/.venv/lib/python3.11/site-packages/torch/_dynamo/symbolic_convert.py", line 1076, in wrapper
    return inner_fn(self, inst)
           ^^^^^^^^^^^^^^^^^^^^
  File "/work/main/.venv/lib/python3.11/site-packages/torch/_dynamo/symbolic_convert.py", line 4520, in CALL
  ...
    raise Unsupported(msg, gb_type, skip_frame)
torch._dynamo.exc.Unsupported: Failed to trace builtin operator
  Explanation: Dynamo does not know how to trace builtin operator `print` with argument types ['str'] (has_kwargs False)
  Hint: Avoid calling builtin `print` with argument types ['str']. Consider using an equivalent alternative function/method to `print`.
  Hint: If you are attempting to call a logging function (e.g. `print`), you can try adding it to `torch._dynamo.config.reorderable_logging_functions`.
  Hint: Please report an issue to PyTorch.

  Developer debug context: builtin print [<class 'torch._dynamo.variables.constant.ConstantVariable'>] False

 For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html
"""


# torch 2.13: recompile_reasons payload after a global float changed (SCALE = 1.0 -> 2.0)
RECOMPILE_PAYLOAD_213 = """\
0/0: G['SCALE'] == 1.0                                             # return x * SCALE  # mp/gg.py:13 in f
User stack trace:
  File "/tmp/gg.py", line 13, in f
    return x * SCALE"""


# torch 2.13: the guard tree (dynamo_cpp_guards_str) of entry 0/0 of that function:
#     def f(x): return x * SCALE
GUARDS_213 = """\

TREE_GUARD_MANAGER:
+- RootGuardManager
| +- LAMBDA_GUARD: torch._functorch.aot_autograd.utils.top_saved_tensors_hooks ids == None  # _dynamo/output_graph.py:1135 in init_ambient_guards
| +- GLOBAL_STATE: ___check_global_state() against {"allow_bf16_reduce":0,"allow_fp16_reduce":0,"allow_tf32":false,"autocast_state":{"cached_enabled":true,"dtype":[15,5,5,15,5,5,15,15,5,5],"enabled":[false,false,false,false,false,false,false,false,false,false]},"default_dtype":6,"deterministic_algorithms":false,"deterministic_algorithms_warn_only":false,"grad_mode":true,"num_threads":2,"torch_function":true,"torch_function_all_disabled":false}
| +- TORCH_FUNCTION_MODE_STACK: ___check_torch_function_mode_stack()
| +- DEFAULT_DEVICE: utils_device.CURRENT_DEVICE == None                           # _dynamo/output_graph.py:1122 in init_ambient_guards
| +- GuardManager: source=L['x'], accessed_by=FrameLocalsGuardAccessor(key='x', framelocals_idx=0), type=<class 'torch.Tensor'>, tag_safe=(False, False)
| | +- TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU), torch.float32, device=None, requires_grad=False, size=[4], stride=[1])  # return x * SCALE  # mp/gg.py:13 in f
| | +- DIMENSION_DYNAMIC_MARKING_GUARD: hasattr(L['x'], '_dynamo_dynamic_indices') == False           # return x * SCALE  # mp/gg.py:13 in f
| | +- DIMENSION_DYNAMIC_MARKING_GUARD: hasattr(L['x'], '_dynamo_weak_dynamic_indices') == False      # return x * SCALE  # mp/gg.py:13 in f
| | +- DIMENSION_DYNAMIC_MARKING_GUARD: hasattr(L['x'], '_dynamo_unbacked_indices') == False          # return x * SCALE  # mp/gg.py:13 in f
| | +- DIMENSION_DYNAMIC_MARKING_GUARD: hasattr(L['x'], '_dynamo_strict_unbacked_indices') == False   # return x * SCALE  # mp/gg.py:13 in f
| | +- DIMENSION_DYNAMIC_MARKING_GUARD: hasattr(L['x'], '_dynamo_static_indices') == False            # return x * SCALE  # mp/gg.py:13 in f
| +- GuardManager: source=G, accessed_by=GlobalsGuardAccessor, type=<class 'dict'>, tag_safe=(False, False)
| | +- GuardManager: source=G['SCALE'], accessed_by=DictGetItemGuardAccessor('SCALE'), type=<class 'float'>, tag_safe=(False, False)
| | | +- EQUALS_MATCH: G['SCALE'] == 1.0                                             # return x * SCALE  # mp/gg.py:13 in f

Guard latency = 59.18 us"""


# torch 2.13: dynamo_output_graph of a 2-layer MLP (fc1, relu, fc2), backend="aot_eager"
DYNAMO_GRAPH = """\
class GraphModule(torch.nn.Module):
    def forward(self, L_self_modules_fc1_parameters_weight_: "f32[16, 8][8, 1]cpu", L_self_modules_fc1_parameters_bias_: "f32[16][1]cpu", L_x_: "f32[2, 8][8, 1]cpu", L_self_modules_fc2_parameters_weight_: "f32[4, 16][16, 1]cpu", L_self_modules_fc2_parameters_bias_: "f32[4][1]cpu"):
        l_self_modules_fc1_parameters_weight_ = L_self_modules_fc1_parameters_weight_
        l_self_modules_fc1_parameters_bias_ = L_self_modules_fc1_parameters_bias_
        l_x_ = L_x_
        l_self_modules_fc2_parameters_weight_ = L_self_modules_fc2_parameters_weight_
        l_self_modules_fc2_parameters_bias_ = L_self_modules_fc2_parameters_bias_

        # File: /tmp/gr.py:17 in forward, code: return self.fc2(torch.relu(self.fc1(x)))
        linear: "f32[2, 16][16, 1]cpu" = torch._C._nn.linear(l_x_, l_self_modules_fc1_parameters_weight_, l_self_modules_fc1_parameters_bias_);  l_x_ = l_self_modules_fc1_parameters_weight_ = l_self_modules_fc1_parameters_bias_ = None
        relu: "f32[2, 16][16, 1]cpu" = torch.relu(linear);  linear = None
        linear_1: "f32[2, 4][4, 1]cpu" = torch._C._nn.linear(relu, l_self_modules_fc2_parameters_weight_, l_self_modules_fc2_parameters_bias_);  relu = l_self_modules_fc2_parameters_weight_ = l_self_modules_fc2_parameters_bias_ = None
        return (linear_1,)
"""


# torch 2.13: its aot_forward_graph
AOT_FORWARD = """\
class GraphModule(torch.nn.Module):
    def forward(
        self,
        primals_1: "f32[16, 8][8, 1]cpu",  # PlainAOTInput(idx=0)
        primals_2: "f32[16][1]cpu",  # PlainAOTInput(idx=1)
        primals_3: "f32[2, 8][8, 1]cpu",  # PlainAOTInput(idx=2)
        primals_4: "f32[4, 16][16, 1]cpu",  # PlainAOTInput(idx=3)
        primals_5: "f32[4][1]cpu",  # PlainAOTInput(idx=4)
    ):
        # File: /tmp/gr.py:17 in forward, code: return self.fc2(torch.relu(self.fc1(x)))
        t: "f32[8, 16][1, 8]cpu" = torch.ops.aten.t.default(primals_1);  primals_1 = None
        addmm: "f32[2, 16][16, 1]cpu" = torch.ops.aten.addmm.default(primals_2, primals_3, t);  primals_2 = t = None
        relu: "f32[2, 16][16, 1]cpu" = torch.ops.aten.relu.default(addmm);  addmm = None
        t_1: "f32[16, 4][1, 16]cpu" = torch.ops.aten.t.default(primals_4)
        addmm_1: "f32[2, 4][4, 1]cpu" = torch.ops.aten.addmm.default(primals_5, relu, t_1);  primals_5 = t_1 = None
        return (
            addmm_1,  # PlainAOTOutput(idx=0)
            primals_3,  # SavedForBackwardsAOTOutput(idx=0)
            primals_4,  # SavedForBackwardsAOTOutput(idx=1)
            relu,  # SavedForBackwardsAOTOutput(idx=2)
        )
"""


# torch 2.13: its aot_backward_graph
AOT_BACKWARD = """\
class GraphModule(torch.nn.Module):
    def forward(
        self,
        primals_3: "f32[2, 8][8, 1]cpu",  # PlainAOTInput(idx=2)
        primals_4: "f32[4, 16][16, 1]cpu",  # PlainAOTInput(idx=3)
        relu: "f32[2, 16][16, 1]cpu",
        tangents_1: "f32[2, 4][4, 1]cpu",  # TangentAOTInput(output=PlainAOTOutput(idx=0))
    ):
        # File: /tmp/gr.py:17 in forward, code: return self.fc2(torch.relu(self.fc1(x)))
        t_1: "f32[16, 4][1, 16]cpu" = torch.ops.aten.t.default(primals_4);  primals_4 = None
        t_2: "f32[4, 16][16, 1]cpu" = torch.ops.aten.t.default(t_1);  t_1 = None
        mm: "f32[2, 16][16, 1]cpu" = torch.ops.aten.mm.default(tangents_1, t_2);  t_2 = None
        t_3: "f32[4, 2][1, 4]cpu" = torch.ops.aten.t.default(tangents_1)
        mm_1: "f32[4, 16][16, 1]cpu" = torch.ops.aten.mm.default(t_3, relu);  t_3 = None
        t_4: "f32[16, 4][1, 16]cpu" = torch.ops.aten.t.default(mm_1);  mm_1 = None
        sum_1: "f32[1, 4][4, 1]cpu" = torch.ops.aten.sum.dim_IntList(tangents_1, [0], True);  tangents_1 = None
        view: "f32[4][1]cpu" = torch.ops.aten.view.default(sum_1, [4]);  sum_1 = None
        t_5: "f32[4, 16][16, 1]cpu" = torch.ops.aten.t.default(t_4);  t_4 = None
        detach: "f32[2, 16][16, 1]cpu" = torch.ops.aten.detach.default(relu);  relu = None
        detach_1: "f32[2, 16][16, 1]cpu" = torch.ops.aten.detach.default(detach);  detach = None
        threshold_backward: "f32[2, 16][16, 1]cpu" = torch.ops.aten.threshold_backward.default(mm, detach_1, 0);  mm = detach_1 = None
        t_6: "f32[16, 2][1, 16]cpu" = torch.ops.aten.t.default(threshold_backward)
        mm_2: "f32[16, 8][8, 1]cpu" = torch.ops.aten.mm.default(t_6, primals_3);  t_6 = primals_3 = None
        t_7: "f32[8, 16][1, 8]cpu" = torch.ops.aten.t.default(mm_2);  mm_2 = None
        sum_2: "f32[1, 16][16, 1]cpu" = torch.ops.aten.sum.dim_IntList(threshold_backward, [0], True);  threshold_backward = None
        view_1: "f32[16][1]cpu" = torch.ops.aten.view.default(sum_2, [16]);  sum_2 = None
        t_8: "f32[16, 8][8, 1]cpu" = torch.ops.aten.t.default(t_7);  t_7 = None
        return (
            t_8,  # GradAOTOutput(grad_of=PlainAOTInput(idx=0))
            view_1,  # GradAOTOutput(grad_of=PlainAOTInput(idx=1))
            None,  # None
            t_5,  # GradAOTOutput(grad_of=PlainAOTInput(idx=3))
            view,  # GradAOTOutput(grad_of=PlainAOTInput(idx=4))
        )
"""


# torch 2.13: the aot_backward_graph of the same MLP with a dynamic batch (mark_dynamic)
AOT_BACKWARD_DYNAMIC = """\
class GraphModule(torch.nn.Module):
    def forward(
        self,
        primals_3: "Sym(s77)",  # PlainAOTInput(idx=2)
        primals_4: "f32[s77, 8][8, 1]cpu",  # PlainAOTInput(idx=3)
        primals_5: "f32[4, 16][16, 1]cpu",  # PlainAOTInput(idx=4)
        relu: "f32[s77, 16][16, 1]cpu",
        tangents_1: "f32[s77, 4][4, 1]cpu",  # TangentAOTInput(output=PlainAOTOutput(idx=0))
    ):
        # File: /tmp/gr.py:17 in forward, code: return self.fc2(torch.relu(self.fc1(x)))
        t_1: "f32[16, 4][1, 16]cpu" = torch.ops.aten.t.default(primals_5);  primals_5 = None
        t_2: "f32[4, 16][16, 1]cpu" = torch.ops.aten.t.default(t_1);  t_1 = None
        mm: "f32[s77, 16][16, 1]cpu" = torch.ops.aten.mm.default(tangents_1, t_2);  t_2 = None
        t_3: "f32[4, s77][1, 4]cpu" = torch.ops.aten.t.default(tangents_1)
        mm_1: "f32[4, 16][16, 1]cpu" = torch.ops.aten.mm.default(t_3, relu);  t_3 = None
        t_4: "f32[16, 4][1, 16]cpu" = torch.ops.aten.t.default(mm_1);  mm_1 = None
        sum_1: "f32[1, 4][4, 1]cpu" = torch.ops.aten.sum.dim_IntList(tangents_1, [0], True);  tangents_1 = None
        view: "f32[4][1]cpu" = torch.ops.aten.view.default(sum_1, [4]);  sum_1 = None
        t_5: "f32[4, 16][16, 1]cpu" = torch.ops.aten.t.default(t_4);  t_4 = None
        detach: "f32[s77, 16][16, 1]cpu" = torch.ops.aten.detach.default(relu);  relu = None
        detach_1: "f32[s77, 16][16, 1]cpu" = torch.ops.aten.detach.default(detach);  detach = None
        threshold_backward: "f32[s77, 16][16, 1]cpu" = torch.ops.aten.threshold_backward.default(mm, detach_1, 0);  mm = detach_1 = None
        t_6: "f32[16, s77][1, 16]cpu" = torch.ops.aten.t.default(threshold_backward)
        mm_2: "f32[16, 8][8, 1]cpu" = torch.ops.aten.mm.default(t_6, primals_4);  t_6 = primals_4 = None
        t_7: "f32[8, 16][1, 8]cpu" = torch.ops.aten.t.default(mm_2);  mm_2 = None
        sum_2: "f32[1, 16][16, 1]cpu" = torch.ops.aten.sum.dim_IntList(threshold_backward, [0], True);  threshold_backward = None
        view_1: "f32[16][1]cpu" = torch.ops.aten.view.default(sum_2, [16]);  sum_2 = None
        t_8: "f32[16, 8][8, 1]cpu" = torch.ops.aten.t.default(t_7);  t_7 = None
        return (
            t_8,  # GradAOTOutput(grad_of=PlainAOTInput(idx=0))
            view_1,  # GradAOTOutput(grad_of=PlainAOTInput(idx=1))
            None,  # None
            None,  # None
            t_5,  # GradAOTOutput(grad_of=PlainAOTInput(idx=4))
            view,  # GradAOTOutput(grad_of=PlainAOTInput(idx=5))
        )
"""


# torch 2.11, H100: inductor_output_code of tests/fixtures/traces/h100-torch211-cudagraphs.log.gz
# (imports, kernel body and inductor_meta shortened; the module ends after partition_0)
TRITON_MODULE = """\
# AOT ID: ['0_inference']


# kernel path: /tmp/torchinductor_root/qu/cquec4mxtjizxocyvktv4ykrkxeynhmzyprzmxsabgs5si3yykdw.py
# Topologically Sorted Source Nodes: [gelu, sum_1], Original ATen: [aten.gelu, aten.sum]
# Source node to ATen node mapping:
#   gelu => add, erf, mul, mul_1, mul_2
#   sum_1 => sum_1
# Graph fragment:
#   %sum_1 : Tensor "f32[32][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_2, [-1]), kwargs = {})
#   return %sum_1
triton_per_fused_gelu_sum_0 = async_compile.triton('triton_per_fused_gelu_sum_0', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 32, 'r0_': 128},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_gelu_sum_0', 'mutated_arg_names': [], 'num_load': 1, 'num_store': 1, 'num_reduction': 1}
)
@triton.jit
def triton_per_fused_gelu_sum_0(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 32
    r0_numel = 128
    R0_BLOCK: tl.constexpr = 128
    tmp0 = tl.load(in_ptr0 + (r0_1 + 128*x0), xmask, other=0.0)
    tmp12 = tl.sum(tmp11, 1)[:, None].to(tl.float32)
    tl.store(out_ptr0 + (x0), tmp12, xmask)
''', device_str='cuda')

def partition_0(args):
    arg0_1, arg1_1 = args
    args.clear()
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        buf0 = empty_strided_cuda((32, 128), (128, 1), torch.float32)
        # Topologically Sorted Source Nodes: [matmul], Original ATen: [aten.mm]
        extern_kernels.mm(arg0_1, arg1_1, out=buf0)
        del arg0_1
        del arg1_1
        buf1 = empty_strided_cuda((32, ), (1, ), torch.float32)
        # Topologically Sorted Source Nodes: [gelu, sum_1], Original ATen: [aten.gelu, aten.sum]
        stream0 = get_raw_stream(0)
        triton_per_fused_gelu_sum_0.run(buf0, buf1, 32, 128, stream=stream0)
        del buf0
    return (buf1, )

"""


# torch 2.13, CPU: inductor_output_code of compile 0/0 (forward) in
# tests/fixtures/traces/cpu-torch213-breaks.log.gz (imports, loop body, Runner plumbing shortened)
CPP_MODULE = """\
# AOT ID: ['0_forward']


cpp_fused_gt_relu_sum_threshold_backward_0 = async_compile.cpp_pybinding(['float*', 'bool*', 'float*', 'bool*'], r'''
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  kernel(float* in_out_ptr0,
                       bool* out_ptr0,
                       float* out_ptr1,
                       bool* out_ptr2)
{
    std::atomic<int> inductor_cpu_integer_div_error{0};
    inductor_cpu_integer_div_error_flag = &inductor_cpu_integer_div_error;
    {
        {
            float tmp_acc0 = 0;
            out_ptr1[static_cast<int64_t>(0L)] = static_cast<float>(tmp_acc0);
        }
    }
    {
        {
            {
                auto tmp0 = out_ptr1[static_cast<int64_t>(0L)];
                auto tmp1 = static_cast<float>(0.0);
                auto tmp2 = tmp0 > tmp1;
                out_ptr2[static_cast<int64_t>(0L)] = tmp2;
            }
        }
    }
    inductor_cpu_integer_div_error_flag = nullptr;
    inductor_cpu_throw_if_integer_div_error(inductor_cpu_integer_div_error);
}
''')


async_compile.wait(globals())
del async_compile

class Runner:
    def call(self, args):
        primals_1, primals_2 = args
        args.clear()
        assert_size_stride(primals_1, (8, 16), (16, 1), 'input')
        assert_size_stride(primals_2, (16, 16), (16, 1), 'input')
        buf0 = empty_strided_cpu((8, 16), (16, 1), torch.float32)
        # Topologically Sorted Source Nodes: [matmul], Original ATen: [aten.mm]
        extern_kernels.mm(primals_1, primals_2, out=buf0)
        del primals_2
        buf1 = buf0; del buf0  # reuse
        buf3 = empty_strided_cpu((8, 16), (16, 1), torch.bool)
        buf2 = empty_strided_cpu((), (), torch.float32)
        buf4 = empty_strided_cpu((), (), torch.bool)
        cpp_fused_gt_relu_sum_threshold_backward_0(buf1, buf3, buf2, buf4)
        return (buf4, buf1, buf3, reinterpret_tensor(primals_1, (16, 8), (1, 16), 0), )
"""


# ---- graph breaks ------------------------------------------------------------------------------


def test_parse_graph_break_encountered_call_first():
    b = _text.parse_graph_break(GRAPH_BREAK_213)
    # the real type is the line after "Encountered graph break when attempting to trace CALL..."
    assert b.type == "Failed to trace builtin operator"
    assert b.reason.startswith("Encountered graph break when attempting to trace CALL: a function call")
    assert b.reason.endswith("compile-graph-break-site/gb/gb0059.html")
    assert "Traceback" not in b.reason and "User code traceback" not in b.reason
    assert b.explanation == (
        "Dynamo does not know how to trace builtin operator `print` with argument types ['str'] (has_kwargs False)"
    )
    assert b.hints == (
        "Avoid calling builtin `print` with argument types ['str']. Consider using an equivalent "
        "alternative function/method to `print`.",
        "If you are attempting to call a logging function (e.g. `print`), you can try adding it to "
        "`torch._dynamo.config.reorderable_logging_functions`.",
        "Please report an issue to PyTorch.",
    )
    assert b.gb_id == "GB0059"
    # the site is the innermost user frame: the helper, not the compiled function's call
    assert (b.filename, b.line) == ("/tmp/gb.py", 11)
    assert [(f.filename, f.line, f.name, f.code) for f in b.user_stack] == [
        ("/tmp/gb.py", 17, "<module>", 'torch.compile(f, backend="eager")(torch.randn(4))'),
        ("/tmp/gb.py", 15, "f", "y = helper(y)"),
        ("/tmp/gb.py", 11, "helper", 'print("hi")'),
    ]


def test_parse_graph_break_site_skips_torch_frames():
    # as in the H100 fixture: the user stack ends in torch's nn.Module plumbing
    torch_frame = (
        '  File "/opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/module.py", '
        "line 1779, in _wrapped_call_impl\n    return self._call_impl(*args, **kwargs)\n"
    )
    text = GRAPH_BREAK_213.replace('    print("hi")\n', '    print("hi")\n' + torch_frame)
    b = _text.parse_graph_break(text)
    assert b.user_stack[-1].name == "_wrapped_call_impl"
    assert (b.filename, b.line) == ("/tmp/gb.py", 11)
    assert not _text.is_user_file(b.user_stack[-1].filename)


def test_parse_graph_break_without_traceback_uses_the_header():
    b = _text.parse_graph_break(GRAPH_BREAK_213.split("User code traceback:")[0])
    assert b.user_stack == ()
    assert (b.type, b.filename, b.line) == ("Failed to trace builtin operator", "/tmp/gb.py", 11)


# ---- recompile reasons and guards ----------------------------------------------------------------


def test_parse_recompile_payload_str():
    # torch 2.11/2.13 log one reason as a plain string (encoding "json" notwithstanding)
    assert _text.parse_recompile_payload(RECOMPILE_PAYLOAD_213) == (RECOMPILE_PAYLOAD_213,)
    h100 = "0/0: tensor 'x' requires_grad mismatch. expected requires_grad=1"
    assert _text.parse_recompile_payload(h100) == (h100,)
    assert _text.parse_recompile_payload(json.dumps(h100)) == (h100,)  # a JSON string
    assert _text.parse_recompile_payload(None) == ()
    assert _text.parse_recompile_payload("") == ()


def test_parse_recompile_payload_list():
    reasons = [
        "0/1: tensor 'x' size mismatch at index 0. expected 4, actual 6",
        "0/0: G['SCALE'] == 1.0  # return x * SCALE  # t.py:3 in f",
    ]
    # how torch's trace_structured writes a list payload
    payload = "[\n" + ",\n".join(json.dumps(r) for r in reasons) + "\n]"
    assert _text.parse_recompile_payload(payload) == tuple(reasons)
    assert _text.failed_entry(reasons[0]) == "0/1"
    assert _text.failed_entry("no entry here") is None


def test_failing_guard_in_a_guard_tree():
    (reason,) = _text.parse_recompile_payload(RECOMPILE_PAYLOAD_213)
    assert _text.failed_entry(reason) == "0/0"
    assert _text.failing_guard(reason, GUARDS_213) == (
        "EQUALS_MATCH: G['SCALE'] == 1.0                                             "
        "# return x * SCALE  # mp/gg.py:13 in f"
    )
    # a tensor reason names the local bare ('x'); the tree spells it L['x']
    tensor = _text.failing_guard("0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6", GUARDS_213)
    assert tensor.startswith("TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(CPU, ")
    assert tensor.endswith("size=[4], stride=[1])  # return x * SCALE  # mp/gg.py:13 in f")
    assert _text.failing_guard("0/0: something torch never guarded", GUARDS_213) is None
    assert _text.failing_guard(reason, None) is None


# ---- Inductor output code -> kernels ------------------------------------------------------------


def test_split_kernels_triton_module():
    assert _outputcode.output_role(TRITON_MODULE) == "inference"
    (k,) = _outputcode.split_kernels(TRITON_MODULE)  # extern_kernels.mm is not a kernel
    assert (k.name, k.language) == ("triton_per_fused_gelu_sum_0", "triton")
    assert (k.nodes, k.aten_ops) == (("gelu", "sum_1"), ("aten.gelu", "aten.sum"))
    assert k.source.startswith("import triton\nimport triton.language as tl\n")
    assert "@triton.jit\ndef triton_per_fused_gelu_sum_0(in_ptr0, out_ptr0," in k.source
    assert k.source.endswith("    tl.store(out_ptr0 + (x0), tmp12, xmask)")
    assert "device_str" not in k.source and "'''" not in k.source


def test_split_kernels_cpp_module():
    assert _outputcode.output_role(CPP_MODULE) == "forward"
    (k,) = _outputcode.split_kernels(CPP_MODULE)
    assert (k.name, k.language) == ("cpp_fused_gt_relu_sum_threshold_backward_0", "cpp")
    assert k.source.startswith('#include <torch/csrc/inductor/cpp_prefix.h>\nextern "C"  void  kernel(')
    assert k.source.endswith("inductor_cpu_throw_if_integer_div_error(inductor_cpu_integer_div_error);\n}")
    # torch 2.13 comments only the extern mm in call(), not the C++ kernel: no source nodes
    assert (k.nodes, k.aten_ops) == ((), ())


def test_kernel_nodes_from_comments_and_provenance():
    from compiler.assemble import _build

    prov = json.dumps(
        {"cppCodeToPost": {"cpp_fused_gt_relu_sum_threshold_backward_0:1": ["relu", "sum_1", "gt"]}}
    )
    acc = _build.Acc(0, 0, 0)
    acc.outputs = [("forward", None, TRITON_MODULE), ("forward", None, CPP_MODULE)]
    acc.provenance = [prov]
    assert [(k.name, k.nodes) for k in _build._parse_kernels(acc)] == [
        ("triton_per_fused_gelu_sum_0", ("gelu", "sum_1")),
        ("cpp_fused_gt_relu_sum_threshold_backward_0", ("relu", "sum_1", "gt")),
    ]


# ---- FX graphs ----------------------------------------------------------------------------------


def test_parse_dynamo_graph_modules_from_parameter_names():
    g = _graphs.parse_graph(DYNAMO_GRAPH)
    assert [(n.name, n.op, n.target, n.module) for n in g.nodes] == [
        (
            "L_self_modules_fc1_parameters_weight_",
            "placeholder",
            "L_self_modules_fc1_parameters_weight_",
            "fc1",
        ),
        ("L_self_modules_fc1_parameters_bias_", "placeholder", "L_self_modules_fc1_parameters_bias_", "fc1"),
        ("L_x_", "placeholder", "L_x_", None),
        (
            "L_self_modules_fc2_parameters_weight_",
            "placeholder",
            "L_self_modules_fc2_parameters_weight_",
            "fc2",
        ),
        ("L_self_modules_fc2_parameters_bias_", "placeholder", "L_self_modules_fc2_parameters_bias_", "fc2"),
        ("linear", "call_function", "torch._C._nn.linear", "fc1"),
        ("relu", "call_function", "torch.relu", None),  # between fc1 and fc2: no common parent
        ("linear_1", "call_function", "torch._C._nn.linear", "fc2"),
        ("output", "output", "output", None),
    ]
    linear = g.nodes[5]
    # Dynamo's `l_x_ = L_x_` aliases resolve to the placeholders
    assert linear.args == (
        "L_x_",
        "L_self_modules_fc1_parameters_weight_",
        "L_self_modules_fc1_parameters_bias_",
    )
    assert (linear.dtype, linear.shape, linear.stride, linear.device) == ("f32", "[2, 16]", "[16, 1]", "cpu")
    assert (linear.source, linear.code) == ("/tmp/gr.py:17", "return self.fc2(torch.relu(self.fc1(x)))")
    assert g.nodes[-1].args == ("linear_1",)
    assert g.op_counts() == {"torch._C._nn.linear": 2, "torch.relu": 1}
    with pytest.warns(DeprecationWarning, match=r"^Graph\.op_census\(\) is now Graph\.op_counts\(\)$"):
        assert g.op_census() == g.op_counts()  # the old name, kept working


def test_parse_aot_forward_graph():
    g = _graphs.parse_graph(AOT_FORWARD)
    assert [(n.name, n.shape) for n in g.nodes if n.op == "placeholder"] == [
        ("primals_1", "[16, 8]"),
        ("primals_2", "[16]"),
        ("primals_3", "[2, 8]"),
        ("primals_4", "[4, 16]"),
        ("primals_5", "[4]"),
    ]
    assert [(n.name, n.target, n.args) for n in g.nodes if n.op == "call_function"] == [
        ("t", "torch.ops.aten.t.default", ("primals_1",)),
        ("addmm", "torch.ops.aten.addmm.default", ("primals_2", "primals_3", "t")),
        ("relu", "torch.ops.aten.relu.default", ("addmm",)),
        ("t_1", "torch.ops.aten.t.default", ("primals_4",)),
        ("addmm_1", "torch.ops.aten.addmm.default", ("primals_5", "relu", "t_1")),
    ]
    # the multi-line `return (` lists the output and what is saved for the backward
    assert g.nodes[-1].args == ("addmm_1", "primals_3", "primals_4", "relu")
    # AOT placeholders are the Dynamo graph's inputs in order: modules follow exactly, and
    # ops get the module of the parameters they read; relu (the root module's own code,
    # one source line shared by fc1 and fc2) gets none
    fw = _modules.with_modules_from(g, _graphs.parse_graph(DYNAMO_GRAPH))
    assert [(n.name, n.module, n.module_inferred) for n in fw.nodes if n.op != "output"] == [
        ("primals_1", "fc1", False),
        ("primals_2", "fc1", False),
        ("primals_3", None, False),
        ("primals_4", "fc2", False),
        ("primals_5", "fc2", False),
        ("t", "fc1", False),
        ("addmm", "fc1", False),
        ("relu", None, False),
        ("t_1", "fc2", False),
        ("addmm_1", "fc2", False),
    ]


def test_parse_aot_backward_graph_and_saved_tensors():
    g = _graphs.parse_graph(AOT_BACKWARD)
    assert g.nodes[-1].args == ("t_8", "view_1", "t_5", "view")  # `None,  # None` is no node
    assert g.op_counts() == {
        "torch.ops.aten.t.default": 8,
        "torch.ops.aten.mm.default": 3,
        "torch.ops.aten.detach.default": 2,
        "torch.ops.aten.sum.dim_IntList": 2,
        "torch.ops.aten.view.default": 2,
        "torch.ops.aten.threshold_backward.default": 1,
    }
    # the backward's inputs other than tangents: what the forward saved
    assert [(s.name, s.dtype, s.shape, s.bytes) for s in _graphs.saved_tensors(g)] == [
        ("primals_3", "f32", "[2, 8]", 2 * 8 * 4),
        ("primals_4", "f32", "[4, 16]", 4 * 16 * 4),
        ("relu", "f32", "[2, 16]", 2 * 16 * 4),
    ]


def test_saved_tensors_with_symbolic_shapes():
    g = _graphs.parse_graph(AOT_BACKWARD_DYNAMIC)
    assert [(s.name, s.dtype, s.shape, s.bytes) for s in _graphs.saved_tensors(g)] == [
        ("primals_3", "Sym(s77)", None, None),  # a SymInt, not a tensor
        ("primals_4", "f32", "[s77, 8]", None),  # symbolic: size unknown
        ("primals_5", "f32", "[4, 16]", 256),
        ("relu", "f32", "[s77, 16]", None),
    ]


@pytest.mark.parametrize(
    ("dtype", "shape", "expected"),
    [("f32", "[4, 8]", 128), ("bf16", "[2, 3]", 12), ("b8", "[8, 64]", 512), ("f32", "[]", 4),
     ("f32", "[s77, 8]", None), ("Sym(s77)", None, None), (None, "[4]", None)],
)  # fmt: skip
def test_tensor_bytes(dtype, shape, expected):
    assert _graphs.tensor_bytes(dtype, shape) == expected


def test_parse_graph_empty():
    assert _graphs.parse_graph(None) is None
    assert _graphs.parse_graph("") is None


def test_a_console_script_launcher_is_library_code(tmp_path):
    """`.venv/bin/pytest`, `bin/torchrun`: an installed package's entry point, never the
    program's own frame (a stack started by one read `pytest:6 in <module>` as the user's)."""
    import os
    import sysconfig

    from compiler.model._paths import frame_kind

    scripts = sysconfig.get_paths()["scripts"]
    assert frame_kind(os.path.join(scripts, "pytest")) == "library"
    assert frame_kind(os.path.join(scripts, "torchrun")) == "library"
    assert frame_kind(str(tmp_path / "bin" / "train.py")) == "user"
