// error: no compute entry point
@vertex
fn main() -> @builtin(position) vec4<f32> {
    return vec4<f32>(0.0);
}
