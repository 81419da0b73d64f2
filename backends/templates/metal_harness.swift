// Minimal Metal host harness for kernels emitted by `backends emit --target metal`.
//
// Build (macOS): swiftc -O harness.swift -o axb-metal
// Run:           ./axb-metal [--deadline-ms D] [--iterations K] FILE.metal...
//
// Each .metal file starts with a line
//   // axb-run: mapping=M instances=I workgroups=W words=K test=NAME
// which says how to run it: W threadgroups of one thread, buffer 0 of K
// zeroed uints (the test memory), buffer 1 one uint (the stop flag). Each
// run commits one command buffer and polls it until the deadline; then it
// sets the stop flag in shared memory, which every loop iteration of the
// kernel reads, and waits for the kernel to end. One JSON line per run,
// in the format of the C++ and CUDA programs.

import Foundation
import Metal

struct RunInfo {
    var mapping = ""
    var instances = 0
    var workgroups = 0
    var words = 0
    var test = ""
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(("error: " + message + "\n").data(using: .utf8)!)
    exit(2)
}

func parseHeader(_ source: String, _ path: String) -> RunInfo {
    let marker = "// axb-run: "
    guard let line = source.split(separator: "\n").first(where: { $0.hasPrefix(marker) }) else {
        fail("\(path): no `\(marker)` line")
    }
    var info = RunInfo()
    var rest = Substring(line.dropFirst(marker.count))
    while !rest.isEmpty {
        if rest.hasPrefix("test=") {
            info.test = String(rest.dropFirst(5))  // the name runs to the end of the line
            break
        }
        let word = rest.prefix(while: { $0 != " " })
        rest = rest.dropFirst(word.count).drop(while: { $0 == " " })
        let kv = word.split(separator: "=", maxSplits: 1).map(String.init)
        guard kv.count == 2 else { fail("\(path): bad field `\(word)`") }
        switch kv[0] {
        case "mapping": info.mapping = kv[1]
        case "instances": info.instances = Int(kv[1]) ?? 0
        case "workgroups": info.workgroups = Int(kv[1]) ?? 0
        case "words": info.words = Int(kv[1]) ?? 0
        default: break
        }
    }
    if info.workgroups <= 0 || info.words <= 0 { fail("\(path): incomplete `\(marker)` line") }
    return info
}

func jsonString(_ s: String) -> String {
    var out = "\""
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        default:
            if scalar.value < 0x20 {
                out += String(format: "\\u%04x", scalar.value)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out + "\""
}

var deadlineMs = 5000.0
var iterations = 1
var files: [String] = []
var args = CommandLine.arguments.dropFirst()
while let arg = args.popFirst() {
    switch arg {
    case "--deadline-ms":
        guard let v = args.popFirst(), let d = Double(v), d > 0 else { fail("--deadline-ms needs a positive number") }
        deadlineMs = d
    case "--iterations":
        guard let v = args.popFirst(), let k = Int(v), k > 0 else { fail("--iterations needs a positive integer") }
        iterations = k
    default:
        if arg.hasPrefix("-") { fail("unknown option \(arg)") }
        files.append(arg)
    }
}
if files.isEmpty { fail("usage: axb-metal [--deadline-ms D] [--iterations K] FILE.metal...") }

guard let device = MTLCreateSystemDefaultDevice(), let queue = device.makeCommandQueue() else {
    fail("no Metal device")
}

for path in files {
    guard let source = try? String(contentsOfFile: path, encoding: .utf8) else { fail("cannot read \(path)") }
    let info = parseHeader(source, path)
    let pipeline: MTLComputePipelineState
    do {
        let library = try device.makeLibrary(source: source, options: nil)
        guard let function = library.makeFunction(name: "axb_test") else { fail("\(path): no kernel axb_test") }
        pipeline = try device.makeComputePipelineState(function: function)
    } catch {
        fail("\(path): \(error)")
    }
    guard let mem = device.makeBuffer(length: info.words * 4, options: .storageModeShared),
          let stop = device.makeBuffer(length: 4, options: .storageModeShared) else {
        fail("\(path): cannot allocate \(info.words) words")
    }
    for iteration in 0..<iterations {
        memset(mem.contents(), 0, mem.length)
        stop.contents().storeBytes(of: UInt32(0), as: UInt32.self)
        guard let commands = queue.makeCommandBuffer(), let encoder = commands.makeComputeCommandEncoder() else {
            fail("cannot create a command buffer")
        }
        encoder.setComputePipelineState(pipeline)
        encoder.setBuffer(mem, offset: 0, index: 0)
        encoder.setBuffer(stop, offset: 0, index: 1)
        encoder.dispatchThreadgroups(MTLSize(width: info.workgroups, height: 1, depth: 1),
                                     threadsPerThreadgroup: MTLSize(width: 1, height: 1, depth: 1))
        encoder.endEncoding()
        let start = DispatchTime.now()
        func elapsedMs() -> Double { Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6 }
        commands.commit()
        var terminated = false
        while true {
            let status = commands.status
            if status == .completed { terminated = true; break }
            if status == .error { break }
            if elapsedMs() >= deadlineMs { break }
            usleep(100)
        }
        if !terminated {
            stop.contents().storeBytes(of: UInt32(1), as: UInt32.self)
            commands.waitUntilCompleted()
        }
        let elapsed = elapsedMs()
        if commands.status == .error {
            FileHandle.standardError.write("warning: \(path): \(String(describing: commands.error))\n".data(using: .utf8)!)
        }
        print("{\"test\":\(jsonString(info.test)),\"target\":\"metal\",\"mapping\":\(jsonString(info.mapping)),"
              + "\"instances\":\(info.instances),\"workgroups\":\(info.workgroups),\"iteration\":\(iteration),"
              + "\"terminated\":\(terminated),\"elapsed_ms\":\(String(format: "%.3f", elapsed)),"
              + "\"device\":\(jsonString(device.name))}")
        fflush(stdout)
    }
}
