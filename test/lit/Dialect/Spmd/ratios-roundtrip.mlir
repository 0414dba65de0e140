// RUN: weft-opt %s | weft-opt | FileCheck %s

// Ratios that have no short decimal form (the gavel-108 shape: 36 devices in
// each of three classes, shares ∝ 15.7 : 10.6 : 4.4 TFLOP/s) survive printing
// and re-parsing exactly, so the ±1e-9 sum check still holds.

// CHECK: ratios = [0.014205573651827725, 0.0095910242490047058, 0.0039811798769453502]
module attributes {
  spmd.mesh = #spmd.mesh<local = [4], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1, 2, 3, 4, 5, 6, 7, 8]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [9, 10, 11, 12, 13, 14, 15, 16, 17]>,
    #spmd.device_class<type = "K80", peak_gflops = 4400, memory_mb = 12000, nodes = [18, 19, 20, 21, 22, 23, 24, 25, 26]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 3456, ratios = [0.014205573651827725, 0.009591024249004706, 0.00398117987694535]>]} {
}
