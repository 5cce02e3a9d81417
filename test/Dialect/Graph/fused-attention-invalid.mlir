// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

func.func @f32(%q: tensor<1x2x8x16xf32>, %kt: tensor<1x2x16x8xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'graph.fused_attention' op needs f16 or bf16 operands (tensor cores), not 'f32'}}
  %o, %l = graph.fused_attention %q, %kt, %v : (tensor<1x2x8x16xf32>, tensor<1x2x16x8xf32>, tensor<1x2x8x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8xf32>) {
  ^bb0(%s: tensor<1x2x8x8xf32>):
    graph.yield %s : tensor<1x2x8x8xf32>
  }
  return
}

// -----

func.func @shapes(%q: tensor<1x2x8x16xbf16>, %kt: tensor<1x2x8x16xbf16>, %v: tensor<1x2x8x16xbf16>) {
  // expected-error @+1 {{'graph.fused_attention' op q 'tensor<1x2x8x16xbf16>', kt 'tensor<1x2x8x16xbf16>' and v 'tensor<1x2x8x16xbf16>' are not [B, H, Tq, D], [B, H, D, Tk] and [B, H, Tk, D]}}
  %o, %l = graph.fused_attention %q, %kt, %v : (tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>) -> (tensor<1x2x8x16xbf16>, tensor<1x2x8xf32>) {
  ^bb0(%s: tensor<1x2x8x8xbf16>):
    graph.yield %s : tensor<1x2x8x8xbf16>
  }
  return
}

// -----

func.func @head(%q: tensor<1x2x8x24xbf16>, %kt: tensor<1x2x24x8xbf16>, %v: tensor<1x2x8x24xbf16>) {
  // expected-error @+1 {{'graph.fused_attention' op has heads of 24 elements; the kernels take 16, 32, 64 or 128}}
  %o, %l = graph.fused_attention %q, %kt, %v : (tensor<1x2x8x24xbf16>, tensor<1x2x24x8xbf16>, tensor<1x2x8x24xbf16>) -> (tensor<1x2x8x24xbf16>, tensor<1x2x8xf32>) {
  ^bb0(%s: tensor<1x2x8x8xbf16>):
    graph.yield %s : tensor<1x2x8x8xbf16>
  }
  return
}

// -----

func.func @out_perm(%q: tensor<1x2x8x16xbf16>, %kt: tensor<1x2x16x8xbf16>, %v: tensor<1x2x8x16xbf16>) {
  // expected-error @+1 {{'graph.fused_attention' op out has type 'tensor<1x2x8x16xbf16>'; expected 'tensor<1x8x2x16xbf16>'}}
  %o, %l = graph.fused_attention %q, %kt, %v {out_perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x8x16xbf16>) -> (tensor<1x2x8x16xbf16>, tensor<1x2x8xf32>) {
  ^bb0(%s: tensor<1x2x8x8xbf16>):
    graph.yield %s : tensor<1x2x8x8xbf16>
  }
  return
}

// -----

func.func @not_a_perm(%q: tensor<1x2x8x16xbf16>, %kt: tensor<1x2x16x8xbf16>, %v: tensor<1x2x8x16xbf16>) {
  // expected-error @+1 {{'graph.fused_attention' op the perm of out is no permutation of its 4 dims}}
  %o, %l = graph.fused_attention %q, %kt, %v {out_perm = array<i64: 0, 2, 2, 3>} : (tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x8x16xbf16>) -> (tensor<1x2x8x16xbf16>, tensor<1x2x8xf32>) {
  ^bb0(%s: tensor<1x2x8x8xbf16>):
    graph.yield %s : tensor<1x2x8x8xbf16>
  }
  return
}

// -----

func.func @lse(%q: tensor<1x2x8x16xbf16>, %kt: tensor<1x2x16x8xbf16>, %v: tensor<1x2x8x16xbf16>) {
  // expected-error @+1 {{'graph.fused_attention' op lse has type 'tensor<1x2x8xbf16>'; expected 'tensor<1x2x8xf32>'}}
  %o, %l = graph.fused_attention %q, %kt, %v : (tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x8x16xbf16>) -> (tensor<1x2x8x16xbf16>, tensor<1x2x8xbf16>) {
  ^bb0(%s: tensor<1x2x8x8xbf16>):
    graph.yield %s : tensor<1x2x8x8xbf16>
  }
  return
}

// -----

func.func @prologue(%q: tensor<1x2x8x16xbf16>, %kt: tensor<1x2x16x8xbf16>, %v: tensor<1x2x8x16xbf16>, %k: tensor<bf16>) {
  // expected-error @+1 {{'graph.fused_attention' op body argument 0 has type 'tensor<1x2x8x16xbf16>', not the result type 'tensor<1x2x8x8xbf16>'}}
  %o, %l = graph.fused_attention %q, %kt, %v prologue(%k : tensor<bf16>) : (tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x8x16xbf16>) -> (tensor<1x2x8x16xbf16>, tensor<1x2x8xf32>) {
  ^bb0(%s: tensor<1x2x8x16xbf16>, %a: tensor<bf16>):
    graph.yield %s : tensor<1x2x8x16xbf16>
  }
  return
}

// -----

func.func @grad_kt(%q: tensor<1x2x8x16xbf16>, %kt: tensor<1x2x16x8xbf16>, %v: tensor<1x2x8x16xbf16>, %o: tensor<1x2x8x16xbf16>, %l: tensor<1x2x8xf32>, %g: tensor<1x2x8x16xbf16>) {
  // expected-error @+1 {{'graph.fused_attention_grad' op grad_kt has type 'tensor<1x2x8x16xbf16>'; expected 'tensor<1x2x16x8xbf16>'}}
  %dq, %dkt, %dv, %delta = graph.fused_attention_grad %q, %kt, %v, %o, %l, %g prologue() epilogue() : (tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8xf32>, tensor<1x2x8x16xbf16>) -> (tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8xf32>) {
  ^bb0(%s: tensor<1x2x8x8xbf16>):
    graph.yield %s : tensor<1x2x8x8xbf16>
  } {
  ^bb0(%s: tensor<1x2x8x8xbf16>):
    graph.yield %s : tensor<1x2x8x8xbf16>
  }
  return
}

// -----

func.func @epilogue(%q: tensor<1x2x8x16xbf16>, %kt: tensor<1x2x16x8xbf16>, %v: tensor<1x2x8x16xbf16>, %o: tensor<1x2x8x16xbf16>, %l: tensor<1x2x8xf32>, %g: tensor<1x2x8x16xbf16>, %k: tensor<bf16>) {
  // expected-error @+1 {{'graph.fused_attention_grad' op body argument 0 has type 'tensor<1x2x8x16xbf16>', not the result type 'tensor<1x2x8x8xbf16>'}}
  %dq, %dkt, %dv, %delta = graph.fused_attention_grad %q, %kt, %v, %o, %l, %g prologue() epilogue(%k : tensor<bf16>) : (tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8xf32>, tensor<1x2x8x16xbf16>) -> (tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8xf32>) {
  ^bb0(%s: tensor<1x2x8x8xbf16>):
    graph.yield %s : tensor<1x2x8x8xbf16>
  } {
  ^bb0(%s: tensor<1x2x8x16xbf16>, %a: tensor<bf16>):
    graph.yield %s : tensor<1x2x8x16xbf16>
  }
  return
}

// -----

func.func @dropout_without_seed(%q: tensor<1x2x8x16xbf16>, %kt: tensor<1x2x16x8xbf16>, %v: tensor<1x2x8x16xbf16>) {
  // expected-error @+1 {{'graph.fused_attention' op needs both dropout_ratio and dropout_seed, or neither}}
  %o, %l = graph.fused_attention %q, %kt, %v {dropout_ratio = 0.1 : f64} : (tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x8x16xbf16>) -> (tensor<1x2x8x16xbf16>, tensor<1x2x8xf32>) {
  ^bb0(%s: tensor<1x2x8x8xbf16>):
    graph.yield %s : tensor<1x2x8x8xbf16>
  }
  return
}

// -----

func.func @dropout_ratio(%q: tensor<1x2x8x16xbf16>, %kt: tensor<1x2x16x8xbf16>, %v: tensor<1x2x8x16xbf16>, %do: tensor<1x2x8x16xbf16>, %o: tensor<1x2x8x16xbf16>, %lse: tensor<1x2x8xf32>) {
  // expected-error @+1 {{'graph.fused_attention_grad' op dropout_ratio must be in [0, 1), got 1}}
  %dq, %dkt, %dv, %delta = graph.fused_attention_grad %q, %kt, %v, %o, %lse, %do prologue() epilogue() {dropout_ratio = 1.0 : f64, dropout_seed = 3 : i64} : (tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8xf32>, tensor<1x2x8x16xbf16>) -> (tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8xf32>) {
  ^bb0(%s: tensor<1x2x8x8xbf16>):
    graph.yield %s : tensor<1x2x8x8xbf16>
  } {
  ^bb0(%g: tensor<1x2x8x8xbf16>):
    graph.yield %g : tensor<1x2x8x8xbf16>
  }
  return
}

// -----

func.func @bias(%q: tensor<1x2x8x16xbf16>, %kt: tensor<1x2x16x8xbf16>, %v: tensor<1x2x8x16xbf16>, %b: tensor<1x2x8x16xbf16>) {
  // expected-error @+1 {{'graph.fused_attention' op kt_bias has type 'tensor<1x2x8x16xbf16>'; it must have its operand's, 'tensor<1x2x16x8xbf16>'}}
  %o, %l = graph.fused_attention %q, %kt, %v q_bias(%b : tensor<1x2x8x16xbf16>) kt_bias(%b : tensor<1x2x8x16xbf16>) : (tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x8x16xbf16>) -> (tensor<1x2x8x16xbf16>, tensor<1x2x8xf32>) {
  ^bb0(%s: tensor<1x2x8x8xbf16>):
    graph.yield %s : tensor<1x2x8x8xbf16>
  }
  return
}

// -----

func.func @grad_bias(%q: tensor<1x2x8x16xbf16>, %kt: tensor<1x2x16x8xbf16>, %v: tensor<1x2x8x16xbf16>, %o: tensor<1x2x8x16xbf16>, %lse: tensor<1x2x8xf32>, %b: tensor<1x2x8x16xf16>) {
  // expected-error @+1 {{'graph.fused_attention_grad' op v_bias has type 'tensor<1x2x8x16xf16>'; it must have its operand's, 'tensor<1x2x8x16xbf16>'}}
  %dq, %dkt, %dv, %delta = graph.fused_attention_grad %q, %kt, %v, %o, %lse, %o v_bias(%b : tensor<1x2x8x16xf16>) prologue() epilogue() : (tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8xf32>, tensor<1x2x8x16xbf16>) -> (tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8xf32>) {
  ^bb0(%s: tensor<1x2x8x8xbf16>):
    graph.yield %s : tensor<1x2x8x8xbf16>
  } {
  ^bb0(%s: tensor<1x2x8x8xbf16>):
    graph.yield %s : tensor<1x2x8x8xbf16>
  }
  return
}
