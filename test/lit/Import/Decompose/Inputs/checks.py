"""FileCheck lines on the imported program of each decomposition test.

Leaves (parameters, constants) are hoisted to the top of @main, so they are
matched with CHECK-DAG before the ops, which are matched in order.
"""


def param(name, var):
    return 'CHECK-DAG: %%[[%s:[0-9]+]] = graph.parameter "%s"' % (var, name)


def const(var, text):
    return "CHECK-DAG: %%[[%s:[0-9]+]] = graph.constant %s" % (var, text)


X = param("x", "X")
ZERO = const("ZERO", "dense<0.000000e+00> : tensor<f32>")
ONE = const("ONE", "dense<1.000000e+00> : tensor<f32>")

CHECKS = {
    "abs": [
        X,
        "CHECK: %[[P:.*]] = graph.relu %[[X]] : tensor<2x4xf32>",
        "CHECK: %[[N:.*]] = graph.neg %[[X]]",
        "CHECK: %[[M:.*]] = graph.relu %[[N]]",
        "CHECK: graph.add %[[P]], %[[M]]",
    ],
    "abs-int": [
        const("ZERO", "dense<0> : tensor<i64>"),
        "CHECK: %[[K:.*]] = graph.cast %{{.*}} : tensor<2x3xf32> -> "
        "tensor<2x3xi64>",
        'CHECK: %[[LT:.*]] = graph.compare %[[K]], %[[ZERO]] '
        '{predicate = "lt"}',
        "CHECK: %[[N:.*]] = graph.neg %[[K]] : tensor<2x3xi64>",
        "CHECK: graph.select %[[LT]], %[[N]], %[[K]]",
        "CHECK-NOT: graph.relu",
    ],
    "reciprocal": [
        X, ONE,
        "CHECK: graph.div %[[ONE]], %[[X]] : (tensor<f32>, tensor<3x3xf32>)",
    ],
    "leaky-relu": [
        X, ZERO, const("A", "dense<1.000000e-01> : tensor<f32>"),
        "CHECK: %[[S:.*]] = graph.mul %[[X]], %[[A]]",
        'CHECK: %[[GT:.*]] = graph.compare %[[X]], %[[ZERO]] '
        '{predicate = "gt"}',
        "CHECK: graph.select %[[GT]], %[[X]], %[[S]]",
    ],
    "thresholded-relu": [
        X, ZERO, const("A", "dense<5.000000e-01> : tensor<f32>"),
        'CHECK: %[[GT:.*]] = graph.compare %[[X]], %[[A]] {predicate = "gt"}',
        "CHECK: graph.select %[[GT]], %[[X]], %[[ZERO]]",
    ],
    "softplus": [
        X, ZERO,
        "CHECK: %[[POS:.*]] = graph.max %[[X]], %[[ZERO]]",
        'CHECK: %[[LT:.*]] = graph.compare %[[X]], %[[ZERO]] '
        '{predicate = "lt"}',
        "CHECK: %[[N:.*]] = graph.neg %[[X]]",
        "CHECK: %[[ABS:.*]] = graph.select %[[LT]], %[[N]], %[[X]]",
        "CHECK: %[[SIG:.*]] = graph.sigmoid %[[ABS]]",
        "CHECK: %[[LOG:.*]] = graph.log %[[SIG]]",
        "CHECK: graph.sub %[[POS]], %[[LOG]]",
        "CHECK-NOT: graph.exp",
    ],
    "softsign": [
        X, ONE,
        "CHECK: %[[P:.*]] = graph.relu %[[X]]",
        "CHECK: %[[N:.*]] = graph.neg %[[X]]",
        "CHECK: %[[M:.*]] = graph.relu %[[N]]",
        "CHECK: %[[ABS:.*]] = graph.add %[[P]], %[[M]]",
        "CHECK: %[[D:.*]] = graph.add %[[ONE]], %[[ABS]]",
        "CHECK: graph.div %[[X]], %[[D]]",
    ],
    "hard-sigmoid": [
        X, const("A", "dense<3.000000e-01>"), const("B", "dense<4.000000e-01>"),
        "CHECK: %[[S:.*]] = graph.mul %[[X]], %[[A]]",
        "CHECK: %[[L:.*]] = graph.add %[[S]], %[[B]]",
        "CHECK: graph.clip %[[L]] {max = 1.000000e+00 : f64, "
        "min = 0.000000e+00 : f64}",
    ],
    "hard-swish": [
        X, const("A", "dense<0.166666672>"), const("B", "dense<5.000000e-01>"),
        "CHECK: %[[S:.*]] = graph.mul %[[X]], %[[A]]",
        "CHECK: %[[L:.*]] = graph.add %[[S]], %[[B]]",
        "CHECK: %[[H:.*]] = graph.clip %[[L]] {max = 1.000000e+00 : f64, "
        "min = 0.000000e+00 : f64}",
        "CHECK: graph.mul %[[X]], %[[H]]",
    ],
    "elu": [
        X, ZERO, ONE, const("A", "dense<0.699999988>"),
        "CHECK: %[[MIN:.*]] = graph.min %[[X]], %[[ZERO]] : "
        "(tensor<9xf32>, tensor<f32>)",
        "CHECK: %[[E:.*]] = graph.exp %[[MIN]]",
        "CHECK: %[[EM1:.*]] = graph.sub %[[E]], %[[ONE]]",
        "CHECK: %[[R:.*]] = graph.relu %[[X]]",
        "CHECK: %[[S:.*]] = graph.mul %[[EM1]], %[[A]]",
        "CHECK: graph.add %[[R]], %[[S]]",
    ],
    "celu": [
        X, ZERO, ONE, const("A", "dense<1.500000e+00>"),
        "CHECK: %[[MIN:.*]] = graph.min %[[X]], %[[ZERO]]",
        "CHECK: %[[D:.*]] = graph.div %[[MIN]], %[[A]]",
        "CHECK: %[[E:.*]] = graph.exp %[[D]]",
        "CHECK: %[[EM1:.*]] = graph.sub %[[E]], %[[ONE]]",
        "CHECK: %[[R:.*]] = graph.relu %[[X]]",
        "CHECK: %[[S:.*]] = graph.mul %[[EM1]], %[[A]]",
        "CHECK: graph.add %[[R]], %[[S]]",
    ],
    "selu": [
        X, ZERO, const("A", "dense<1.67326319>"),
        const("G", "dense<1.05070102>"),
        "CHECK: %[[MIN:.*]] = graph.min %[[X]], %[[ZERO]]",
        "CHECK: graph.exp %[[MIN]]",
        "CHECK: %[[R:.*]] = graph.relu %[[X]]",
        "CHECK: %[[S:.*]] = graph.mul %{{.*}}, %[[A]]",
        "CHECK: %[[ELU:.*]] = graph.add %[[R]], %[[S]]",
        "CHECK: graph.mul %[[ELU]], %[[G]]",
    ],
    "sign": [
        X, ZERO, ONE, const("M1", "dense<-1.000000e+00>"),
        'CHECK: %[[LT:.*]] = graph.compare %[[X]], %[[ZERO]] '
        '{predicate = "lt"}',
        "CHECK: %[[NZ:.*]] = graph.select %[[LT]], %[[M1]], %[[ZERO]]",
        'CHECK: %[[GT:.*]] = graph.compare %[[X]], %[[ZERO]] '
        '{predicate = "gt"}',
        "CHECK: graph.select %[[GT]], %[[ONE]], %[[NZ]]",
    ],
    "sign-int": [
        const("ZERO", "dense<0> : tensor<i64>"),
        const("ONE", "dense<1> : tensor<i64>"),
        const("M1", "dense<-1> : tensor<i64>"),
        "CHECK: %[[K:.*]] = graph.cast %{{.*}} : tensor<2x3xf32> -> "
        "tensor<2x3xi64>",
        'CHECK: %[[LT:.*]] = graph.compare %[[K]], %[[ZERO]] '
        '{predicate = "lt"}',
        "CHECK: %[[NZ:.*]] = graph.select %[[LT]], %[[M1]], %[[ZERO]]",
        'CHECK: %[[GT:.*]] = graph.compare %[[K]], %[[ZERO]] '
        '{predicate = "gt"}',
        "CHECK: graph.select %[[GT]], %[[ONE]], %[[NZ]] : (tensor<2x3xi1>, "
        "tensor<i64>, tensor<2x3xi64>) -> tensor<2x3xi64>",
    ],
    "mish": [
        X, ZERO,
        "CHECK: %[[POS:.*]] = graph.max %[[X]], %[[ZERO]]",
        "CHECK: %[[LOG:.*]] = graph.log",
        "CHECK: %[[SP:.*]] = graph.sub %[[POS]], %[[LOG]]",
        "CHECK: %[[T:.*]] = graph.tanh %[[SP]]",
        "CHECK: graph.mul %[[X]], %[[T]]",
    ],
    "swish": [
        X, const("A", "dense<1.500000e+00>"),
        "CHECK: %[[S:.*]] = graph.mul %[[X]], %[[A]]",
        "CHECK: %[[SIG:.*]] = graph.sigmoid %[[S]]",
        "CHECK: graph.mul %[[X]], %[[SIG]]",
    ],
    "gelu-tanh": [
        X, const("B", "dense<0.0713548139>"), const("A", "dense<1.59576917>"),
        "CHECK: %[[SQ:.*]] = graph.mul %[[X]], %[[X]]",
        "CHECK: %[[T:.*]] = graph.mul %[[SQ]], %[[B]]",
        "CHECK: %[[P:.*]] = graph.add %[[T]], %[[A]]",
        "CHECK: %[[Z:.*]] = graph.mul %[[X]], %[[P]]",
        "CHECK: %[[SIG:.*]] = graph.sigmoid %[[Z]]",
        "CHECK: graph.mul %[[X]], %[[SIG]]",
        "CHECK-NOT: graph.gelu",
    ],
    "gelu-erf": [
        X,
        "CHECK: graph.gelu %[[X]] : tensor<2x4xf32>",
    ],
    "sum": [
        param("a", "A"), param("b", "B"), param("c", "C"),
        "CHECK: %[[AB:.*]] = graph.add %[[A]], %[[B]] : (tensor<2x3xf32>, "
        "tensor<3xf32>) -> tensor<2x3xf32>",
        "CHECK: graph.add %[[AB]], %[[C]] : (tensor<2x3xf32>, "
        "tensor<2x1xf32>) -> tensor<2x3xf32>",
    ],
    "mean": [
        param("a", "A"), param("b", "B"), param("c", "C"),
        const("N", "dense<3.000000e+00> : tensor<f32>"),
        "CHECK: %[[AB:.*]] = graph.add %[[A]], %[[B]]",
        "CHECK: %[[ABC:.*]] = graph.add %[[AB]], %[[C]]",
        "CHECK: graph.div %[[ABC]], %[[N]]",
    ],
    "prelu": [
        X, param("slope", "S"), ZERO,
        "CHECK: %[[NEG:.*]] = graph.mul %[[X]], %[[S]] : "
        "(tensor<2x3x2x2xf32>, tensor<3x1x1xf32>) -> tensor<2x3x2x2xf32>",
        'CHECK: %[[GT:.*]] = graph.compare %[[X]], %[[ZERO]] '
        '{predicate = "gt"}',
        "CHECK: graph.select %[[GT]], %[[X]], %[[NEG]]",
    ],
    "cast-like": [
        X,
        "CHECK: %[[H:.*]] = graph.cast %[[X]] : tensor<2x3xf32> -> "
        "tensor<2x3xf16>",
        "CHECK: graph.cast %[[H]] : tensor<2x3xf16> -> tensor<2x3xf32>",
    ],
    "cast-like-f64": [
        X,
        "CHECK: %[[H:.*]] = graph.cast %[[X]] : tensor<2x3xf32> -> "
        "tensor<2x3xf64>",
        "CHECK: graph.cast %[[H]] : tensor<2x3xf64> -> tensor<2x3xf32>",
    ],
    "cast-like-int": [
        X,
        "CHECK: graph.cast %[[X]] : tensor<2x3xf32> -> tensor<2x3xi64>",
    ],
    "instance-norm": [
        X, param("s", "S"), param("b", "B"),
        const("ONES", "dense<1.000000e+00> : tensor<2x3xf32>"),
        const("ZEROS", "dense<0.000000e+00> : tensor<2x3xf32>"),
        "CHECK: %[[N:.*]] = graph.layer_norm %[[X]], %[[ONES]], %[[ZEROS]] "
        "{axis = 2 : i64, epsilon = 0.0099999997764825821 : f64}",
        "CHECK: %[[SC:.*]] = graph.reshape %[[S]] : tensor<4xf32> -> "
        "tensor<4x1x1xf32>",
        "CHECK: %[[Y:.*]] = graph.mul %[[N]], %[[SC]]",
        "CHECK: %[[BC:.*]] = graph.reshape %[[B]] : tensor<4xf32> -> "
        "tensor<4x1x1xf32>",
        "CHECK: graph.add %[[Y]], %[[BC]]",
    ],
    "group-norm-18": [
        X, param("s", "S"), param("b", "B"),
        const("ONES", "dense<1.000000e+00> : tensor<12xf32>"),
        const("ZEROS", "dense<0.000000e+00> : tensor<12xf32>"),
        "CHECK: %[[G:.*]] = graph.reshape %[[X]] : tensor<2x4x2x3xf32> -> "
        "tensor<2x2x12xf32>",
        "CHECK: %[[N:.*]] = graph.layer_norm %[[G]], %[[ONES]], %[[ZEROS]] "
        "{axis = 2 : i64",
        "CHECK: %[[SG:.*]] = graph.reshape %[[S]] : tensor<2xf32> -> "
        "tensor<2x1xf32>",
        "CHECK: %[[Y:.*]] = graph.mul %[[N]], %[[SG]]",
        "CHECK: %[[BG:.*]] = graph.reshape %[[B]] : tensor<2xf32> -> "
        "tensor<2x1xf32>",
        "CHECK: %[[Z:.*]] = graph.add %[[Y]], %[[BG]]",
        "CHECK: graph.reshape %[[Z]] : tensor<2x2x12xf32> -> "
        "tensor<2x4x2x3xf32>",
    ],
    "group-norm-21": [
        X, param("s", "S"), param("b", "B"),
        const("ONES", "dense<1.000000e+00> : tensor<12xf32>"),
        const("ZEROS", "dense<0.000000e+00> : tensor<12xf32>"),
        "CHECK: %[[G:.*]] = graph.reshape %[[X]] : tensor<2x4x2x3xf32> -> "
        "tensor<2x2x12xf32>",
        "CHECK: %[[N:.*]] = graph.layer_norm %[[G]], %[[ONES]], %[[ZEROS]] "
        "{axis = 2 : i64",
        "CHECK: %[[U:.*]] = graph.reshape %[[N]] : tensor<2x2x12xf32> -> "
        "tensor<2x4x2x3xf32>",
        "CHECK: %[[SC:.*]] = graph.reshape %[[S]] : tensor<4xf32> -> "
        "tensor<4x1x1xf32>",
        "CHECK: %[[Y:.*]] = graph.mul %[[U]], %[[SC]]",
        "CHECK: %[[BC:.*]] = graph.reshape %[[B]] : tensor<4xf32> -> "
        "tensor<4x1x1xf32>",
        "CHECK: graph.add %[[Y]], %[[BC]]",
    ],
    "rms-norm": [
        X, param("s", "S"), const("EPS", "dense<0.00999999977>"),
        "CHECK: %[[SQ:.*]] = graph.mul %[[X]], %[[X]]",
        "CHECK: %[[M:.*]] = graph.reduce_mean %[[SQ]] {axes = array<i64: 1, "
        "2>, keepdims = true} : tensor<2x3x4xf32> -> tensor<2x1x1xf32>",
        "CHECK: %[[ME:.*]] = graph.add %[[M]], %[[EPS]]",
        "CHECK: %[[R:.*]] = graph.rsqrt %[[ME]]",
        "CHECK: %[[N:.*]] = graph.mul %[[X]], %[[R]]",
        "CHECK: graph.mul %[[N]], %[[S]] : (tensor<2x3x4xf32>, "
        "tensor<3x4xf32>)",
    ],
    "trilu-upper": [
        X, ZERO,
        const("MASK", "dense<{{\\[}}[false, true, true, true], [false, false, "
              "true, true], [false, false, false, true]]> : tensor<3x4xi1>"),
        "CHECK: graph.select %[[MASK]], %[[X]], %[[ZERO]] : (tensor<3x4xi1>, "
        "tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3x4xf32>",
    ],
    "trilu-lower": [
        X, ZERO,
        const("MASK", "dense<{{\\[}}[false, false, false, false], [true, "
              "false, false, false], [true, true, false, false]]> : "
              "tensor<3x4xi1>"),
        "CHECK: graph.select %[[MASK]], %[[X]], %[[ZERO]]",
    ],
    "tile": [
        X,
        "CHECK: %[[U:.*]] = graph.reshape %[[X]] : tensor<2x1x3xf32> -> "
        "tensor<2x1x1x1x3xf32>",
        "CHECK: %[[E:.*]] = graph.expand %[[U]] : tensor<2x1x1x1x3xf32> -> "
        "tensor<2x3x1x2x3xf32>",
        "CHECK: graph.reshape %[[E]] : tensor<2x3x1x2x3xf32> -> "
        "tensor<2x3x6xf32>",
    ],
    "cumsum-last": [
        X,
        const("T", "dense<{{\\[}}[1.000000e+00, 1.000000e+00, 1.000000e+00, "
              "1.000000e+00, 1.000000e+00], [0.000000e+00, 1.000000e+00, "
              "{{.*}} : tensor<5x5xf32>"),
        "CHECK: graph.matmul %[[X]], %[[T]] : (tensor<2x5xf32>, "
        "tensor<5x5xf32>) -> tensor<2x5xf32>",
    ],
    "cumsum-reverse-exclusive": [
        X,
        const("T", "dense<{{\\[}}[0.000000e+00, 1.000000e+00, 1.000000e+00], "
              "[0.000000e+00, 0.000000e+00, 1.000000e+00], [0.000000e+00, "
              "0.000000e+00, 0.000000e+00]]> : tensor<3x3xf32>"),
        "CHECK: graph.matmul %[[T]], %[[X]] : (tensor<3x3xf32>, "
        "tensor<2x3x4xf32>) -> tensor<2x3x4xf32>",
        "CHECK-NOT: graph.transpose",
    ],
    "cumsum-axis0": [
        X,
        const("T", "dense<{{\\[}}[1.000000e+00, 1.000000e+00], "
              "[0.000000e+00, 1.000000e+00]]> : tensor<2x2xf32>"),
        "CHECK: %[[A:.*]] = graph.transpose %[[X]] {perm = array<i64: 1, 2, "
        "0>} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>",
        "CHECK: %[[M:.*]] = graph.matmul %[[A]], %[[T]]",
        "CHECK: graph.transpose %[[M]] {perm = array<i64: 2, 0, 1>} : "
        "tensor<3x4x2xf32> -> tensor<2x3x4xf32>",
    ],
    "cumsum-int": [
        'CHECK-DAG: %[[M:[0-9]+]] = graph.buffer "m" : tensor<2x5xi64>',
        const("Z1", "dense<0> : tensor<2x1xi64>"),
        "CHECK-NOT: graph.matmul",
        "CHECK: %[[S1:.*]] = graph.slice %[[M]] {limits = array<i64: 2, 4>, "
        "starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : "
        "tensor<2x5xi64> -> tensor<2x4xi64>",
        "CHECK: %[[C1:.*]] = graph.concat %[[Z1]], %[[S1]] {axis = 1 : i64}",
        "CHECK: %[[Y1:.*]] = graph.add %[[M]], %[[C1]]",
        "CHECK: graph.slice %[[Y1]] {{.*}} -> tensor<2x3xi64>",
        "CHECK: %[[Y2:.*]] = graph.add %[[Y1]]",
        "CHECK: graph.slice %[[Y2]] {{.*}} -> tensor<2x1xi64>",
        "CHECK: %[[Y3:.*]] = graph.add %[[Y2]]",
        "CHECK: graph.cast %[[Y3]] : tensor<2x5xi64> -> tensor<2x5xf32>",
    ],
    "cumsum-scan": [
        X, const("Z1", "dense<0.000000e+00> : tensor<1x1xf32>"),
        "CHECK-NOT: graph.matmul",
        "CHECK: %[[S:.*]] = graph.slice %[[X]] {limits = array<i64: 260, 1>, "
        "starts = array<i64: 1, 0>, steps = array<i64: 1, 1>} : "
        "tensor<260x1xf32> -> tensor<259x1xf32>",
        "CHECK: %[[E:.*]] = graph.concat %[[S]], %[[Z1]] {axis = 0 : i64}",
        "CHECK: graph.slice %[[E]] {limits = array<i64: 260, 1>, "
        "starts = array<i64: 1, 0>",
        "CHECK-COUNT-9: graph.add",
        "CHECK-NOT: graph.add",
    ],
    "one-hot": [
        'CHECK-DAG: %[[IDS:[0-9]+]] = graph.buffer "ids" : tensor<2x3xi64>',
        param("vals", "V"),
        const("DEPTH", "dense<4> : tensor<i64>"),
        const("ZERO", "dense<0> : tensor<i64>"),
        const("RANGE", "dense<{{\\[\\[\\[}}0, 1, 2, 3]]]> : tensor<1x1x4xi64>"),
        "CHECK: %[[I:.*]] = graph.reshape %[[IDS]] : tensor<2x3xi64> -> "
        "tensor<2x3x1xi64>",
        "CHECK: %[[W:.*]] = graph.add %[[I]], %[[DEPTH]]",
        'CHECK: %[[LT:.*]] = graph.compare %[[I]], %[[ZERO]] '
        '{predicate = "lt"}',
        "CHECK: %[[J:.*]] = graph.select %[[LT]], %[[W]], %[[I]]",
        'CHECK: %[[HIT:.*]] = graph.compare %[[J]], %[[RANGE]] '
        '{predicate = "eq"} : (tensor<2x3x1xi64>, tensor<1x1x4xi64>) -> '
        'tensor<2x3x4xi1>',
        "CHECK: %[[ON1:.*]] = graph.slice %[[V]] {limits = array<i64: 2>, "
        "starts = array<i64: 1>",
        "CHECK: %[[ON:.*]] = graph.reshape %[[ON1]] : tensor<1xf32> -> "
        "tensor<f32>",
        "CHECK: %[[OFF1:.*]] = graph.slice %[[V]] {limits = array<i64: 1>, "
        "starts = array<i64: 0>",
        "CHECK: %[[OFF:.*]] = graph.reshape %[[OFF1]]",
        "CHECK: graph.select %[[HIT]], %[[ON]], %[[OFF]] : (tensor<2x3x4xi1>, "
        "tensor<f32>, tensor<f32>) -> tensor<2x3x4xf32>",
    ],
    "one-hot-axis": [
        const("ZERO", "dense<0> : tensor<i64>"),
        const("ON", "dense<3> : tensor<i64>"),
        const("RANGE", "dense<{{\\[\\[\\[}}0], [1], [2], [3], [4], [5]]]> : "
              "tensor<1x6x1xi64>"),
        "CHECK: %[[I:.*]] = graph.reshape %{{.*}} : tensor<2x3xi64> -> "
        "tensor<2x1x3xi64>",
        'CHECK: %[[HIT:.*]] = graph.compare %{{.*}}, %[[RANGE]] '
        '{predicate = "eq"} : (tensor<2x1x3xi64>, tensor<1x6x1xi64>) -> '
        'tensor<2x6x3xi1>',
        "CHECK: graph.select %[[HIT]], %[[ON]], %[[ZERO]] : "
        "(tensor<2x6x3xi1>, tensor<i64>, tensor<i64>) -> tensor<2x6x3xi64>",
    ],
    "size": [
        X, const("N", "dense<6.000000e+00> : tensor<f32>"),
        "CHECK: graph.mul %[[X]], %[[N]]",
    ],
    "argmax": [
        X,
        const("RAMP", "dense<{{\\[}}[3, 2, 1, 0]]> : tensor<1x4xi64>"),
        const("NONE", "dense<-1> : tensor<i64>"),
        const("LAST", "dense<3> : tensor<i64>"),
        "CHECK: %[[M:.*]] = graph.reduce_max %[[X]] {axes = array<i64: 1>, "
        "keepdims = true} : tensor<3x4xf32> -> tensor<3x1xf32>",
        'CHECK: %[[HIT:.*]] = graph.compare %[[X]], %[[M]] {predicate = "eq"}',
        "CHECK: %[[S:.*]] = graph.select %[[HIT]], %[[RAMP]], %[[NONE]]",
        "CHECK: %[[B:.*]] = graph.reduce_max %[[S]] {axes = array<i64: 1>, "
        "keepdims = false} : tensor<3x4xi64> -> tensor<3xi64>",
        "CHECK: graph.sub %[[LAST]], %[[B]] : (tensor<i64>, tensor<3xi64>) "
        "-> tensor<3xi64>",
    ],
    "argmin-last": [
        X,
        const("RAMP", "dense<{{\\[}}[0], [1], [2]]> : tensor<3x1xi64>"),
        const("NONE", "dense<-1> : tensor<i64>"),
        "CHECK: %[[N:.*]] = graph.neg %[[X]]",
        "CHECK: %[[M:.*]] = graph.reduce_max %[[N]] {axes = array<i64: 0>, "
        "keepdims = true}",
        'CHECK: %[[HIT:.*]] = graph.compare %[[N]], %[[M]] {predicate = "eq"}',
        "CHECK: %[[S:.*]] = graph.select %[[HIT]], %[[RAMP]], %[[NONE]]",
        "CHECK: %[[B:.*]] = graph.reduce_max %[[S]] {axes = array<i64: 0>, "
        "keepdims = true} : tensor<3x4xi64> -> tensor<1x4xi64>",
        "CHECK-NEXT: graph.cast %[[B]]",
    ],
    "einsum-batched-matmul": [
        param("a", "A"), param("b", "B"),
        "CHECK-NOT: graph.transpose",
        "CHECK-NOT: graph.reshape",
        "CHECK: graph.matmul %[[A]], %[[B]] : (tensor<2x3x4xf32>, "
        "tensor<2x4x5xf32>) -> tensor<2x3x5xf32>",
    ],
    "einsum-attention": [
        param("a", "A"), param("b", "B"),
        "CHECK: %[[BT:.*]] = graph.transpose %[[B]] {perm = array<i64: 0, 1, "
        "3, 2>} : tensor<2x2x5x4xf32> -> tensor<2x2x4x5xf32>",
        "CHECK-NEXT: graph.matmul %[[A]], %[[BT]] : (tensor<2x2x3x4xf32>, "
        "tensor<2x2x4x5xf32>) -> tensor<2x2x3x5xf32>",
    ],
    "einsum-implicit": [
        param("a", "A"), param("b", "B"),
        "CHECK: graph.matmul %[[A]], %[[B]] : (tensor<3x4xf32>, "
        "tensor<4x2xf32>) -> tensor<3x2xf32>",
    ],
    "einsum-outer": [
        param("a", "A"), param("b", "B"),
        "CHECK: %[[C:.*]] = graph.reshape %[[A]] : tensor<3xf32> -> "
        "tensor<3x1xf32>",
        "CHECK: %[[R:.*]] = graph.reshape %[[B]] : tensor<4xf32> -> "
        "tensor<1x4xf32>",
        "CHECK: graph.mul %[[C]], %[[R]] : (tensor<3x1xf32>, tensor<1x4xf32>)"
        " -> tensor<3x4xf32>",
        "CHECK-NOT: graph.matmul",
    ],
    "einsum-transpose": [
        param("a", "A"),
        "CHECK: graph.transpose %[[A]] {perm = array<i64: 1, 0>} : "
        "tensor<3x4xf32> -> tensor<4x3xf32>",
    ],
    "einsum-sum": [
        param("a", "A"),
        "CHECK: graph.reduce_sum %[[A]] {axes = array<i64: 1>, keepdims = "
        "false} : tensor<2x3x4xf32> -> tensor<2x4xf32>",
    ],
    "einsum-dot": [
        param("a", "A"), param("b", "B"),
        "CHECK: %[[L:.*]] = graph.reshape %[[A]] : tensor<3x4xf32> -> "
        "tensor<3x1x4xf32>",
        "CHECK: %[[R:.*]] = graph.reshape %[[B]] : tensor<3x4xf32> -> "
        "tensor<3x4x1xf32>",
        "CHECK: %[[M:.*]] = graph.matmul %[[L]], %[[R]] : "
        "(tensor<3x1x4xf32>, tensor<3x4x1xf32>) -> tensor<3x1x1xf32>",
        "CHECK: graph.reshape %[[M]] : tensor<3x1x1xf32> -> tensor<3xf32>",
    ],
    "einsum-ellipsis": [
        param("a", "A"), param("b", "B"),
        "CHECK: %[[L:.*]] = graph.reshape %[[A]] : tensor<2x3x4xf32> -> "
        "tensor<6x4xf32>",
        "CHECK: %[[M:.*]] = graph.matmul %[[L]], %[[B]] : (tensor<6x4xf32>, "
        "tensor<4x5xf32>) -> tensor<6x5xf32>",
        "CHECK: graph.reshape %[[M]] : tensor<6x5xf32> -> tensor<2x3x5xf32>",
    ],
    "einsum-chain": [
        param("a", "A"), param("b", "B"), param("c", "C"),
        "CHECK: %[[S:.*]] = graph.reduce_sum %[[A]] {axes = array<i64: 2>, "
        "keepdims = false} : tensor<2x3x2xf32> -> tensor<2x3xf32>",
        "CHECK: %[[AB:.*]] = graph.matmul %[[S]], %[[B]] : (tensor<2x3xf32>, "
        "tensor<3x4xf32>) -> tensor<2x4xf32>",
        "CHECK: graph.matmul %[[AB]], %[[C]] : (tensor<2x4xf32>, "
        "tensor<4x2xf32>) -> tensor<2x2xf32>",
    ],
}
