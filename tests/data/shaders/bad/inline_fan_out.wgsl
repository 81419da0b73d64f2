// error: more than 4096 calls inlined (each call is a copy of its function's body): refused
@group(0) @binding(0) var<storage, read_write> x: u32;
fn f0() { }
fn f1() { f0(); f0(); f0(); f0(); f0(); f0(); f0(); f0(); f0(); f0(); }
fn f2() { f1(); f1(); f1(); f1(); f1(); f1(); f1(); f1(); f1(); f1(); }
fn f3() { f2(); f2(); f2(); f2(); f2(); f2(); f2(); f2(); f2(); f2(); }
fn f4() { f3(); f3(); f3(); f3(); f3(); f3(); f3(); f3(); f3(); f3(); }
fn f5() { f4(); f4(); f4(); f4(); f4(); f4(); f4(); f4(); f4(); f4(); }
fn f6() { f5(); f5(); f5(); f5(); f5(); f5(); f5(); f5(); f5(); f5(); }
fn f7() { f6(); f6(); f6(); f6(); f6(); f6(); f6(); f6(); f6(); f6(); }
fn f8() { f7(); f7(); f7(); f7(); f7(); f7(); f7(); f7(); f7(); f7(); }
@compute @workgroup_size(1)
fn main() { f8(); x = 1u; }
