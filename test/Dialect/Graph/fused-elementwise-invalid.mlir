// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

// Tests graph.fused_elementwise's verifier: the body's arguments are the
// inputs, the inputs broadcast to the one result type (of its element type,
// or i1 for a where's condition), the body holds only fusable elementwise
// ops of that type and yields one value per result.

func.func @arg_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.fused_elementwise' op has 1 inputs but its body 2 arguments}}
  %y = graph.fused_elementwise %x : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %n = graph.neg %a : tensor<4xf32>
    graph.yield %n : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

func.func @arg_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.fused_elementwise' op body argument 0 has type 'tensor<1xf32>', its input 'tensor<4xf32>'}}
  %y = graph.fused_elementwise %x : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<1xf32>):
    %n = graph.neg %a : tensor<1xf32>
    graph.yield %n : tensor<1xf32>
  }
  return %y : tensor<4xf32>
}

// -----

func.func @no_broadcast(%x: tensor<3xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.fused_elementwise' op input 0 of type 'tensor<3xf32>' does not broadcast to the result type 'tensor<4xf32>'}}
  %y = graph.fused_elementwise %x : (tensor<3xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<3xf32>):
    %n = graph.neg %a : tensor<3xf32>
    graph.yield %n : tensor<3xf32>
  }
  return %y : tensor<4xf32>
}

// -----

func.func @element_type(%x: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.fused_elementwise' op input 0 of type 'tensor<4xf16>' does not broadcast to the result type 'tensor<4xf32>'}}
  %y = graph.fused_elementwise %x : (tensor<4xf16>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf16>):
    %c = graph.cast %a : tensor<4xf16> -> tensor<4xf32>
    graph.yield %c : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

func.func @not_fusable(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'graph.fused_elementwise' op body holds 'graph.softmax', which is no fusable elementwise op}}
  %y = graph.fused_elementwise %x : (tensor<2x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>):
    // expected-note @+1 {{here}}
    %s = graph.softmax %a {axis = 1 : i64} : tensor<2x4xf32>
    graph.yield %s : tensor<2x4xf32>
  }
  return %y : tensor<2x4xf32>
}

// -----

func.func @body_type(%x: tensor<2x4xf32>, %v: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'graph.fused_elementwise' op body op 'graph.neg' has type 'tensor<4xf32>', not the result type 'tensor<2x4xf32>'}}
  %y = graph.fused_elementwise %x, %v : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>, %b: tensor<4xf32>):
    %n = graph.neg %b : tensor<4xf32>
    %s = graph.add %a, %n : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
    graph.yield %s : tensor<2x4xf32>
  }
  return %y : tensor<2x4xf32>
}

// -----

func.func @yield_count(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{'graph.fused_elementwise' op yields 1 values but has 2 results}}
  %y:2 = graph.fused_elementwise %x : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %n = graph.neg %a : tensor<4xf32>
    graph.yield %n : tensor<4xf32>
  }
  return %y#0, %y#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @result_types(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf16>) {
  // expected-error @+1 {{'graph.fused_elementwise' op results have types 'tensor<4xf32>' and 'tensor<4xf16>'; all must have one type}}
  %y:2 = graph.fused_elementwise %x : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf16>) {
  ^bb0(%a: tensor<4xf32>):
    %n = graph.neg %a : tensor<4xf32>
    graph.yield %n, %n : tensor<4xf32>, tensor<4xf32>
  }
  return %y#0, %y#1 : tensor<4xf32>, tensor<4xf16>
}

// -----

func.func @yield_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.fused_elementwise' op yields value 0 of type 'tensor<2x4xf32>', not the result type 'tensor<4xf32>'}}
  %y = graph.fused_elementwise %x : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %n = graph.neg %a : tensor<4xf32>
    %b = graph.add %n, %n : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %w = graph.expand %b {shape = [2, 4]} : tensor<4xf32> -> tensor<2x4xf32>
    graph.yield %w : tensor<2x4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

func.func @outside_yield(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.yield' op expects parent op to be one of 'graph.fused_elementwise, graph.fused_softmax, graph.fused_softmax_grad, graph.fused_attention, graph.fused_attention_grad'}}
  graph.yield %x : tensor<4xf32>
}

// -----

func.func @bool_misused(%m: tensor<4xi1>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.fused_elementwise' op body holds 'graph.cast', which is no fusable elementwise op}}
  %y = graph.fused_elementwise %m : (tensor<4xi1>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xi1>):
    // expected-note @+1 {{here}}
    %c = graph.cast %a : tensor<4xi1> -> tensor<4xf32>
    graph.yield %c : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}
