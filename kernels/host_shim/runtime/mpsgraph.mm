// mps-migrate host shim: MPSGraph emulated. Building a graph records nodes (selector, arguments); running it hands
// the nodes, the feeds and the result buffers to the Python worker (migrate/host_code/graph_eval.py), which
// evaluates them with torch CPU ops following rules/mpsgraph.yaml, the table port reads too. MPSNDArray views
// (the strided placeholders of macOS 15) are recorded as a chain of view steps over their buffer.
//
// A selector the table emulates is answered by one generic method (x86-64 SysV: integer and pointer arguments
// come in order from the general registers, then the stack; doubles from the vector registers), its arguments
// read by the kinds the table gives. Any other selector raises, naming it.
#include <MetalPerformanceShadersGraph/MetalPerformanceShadersGraph.h>
#include <objc/runtime.h>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using GraphFn = int (*)(const char* request, char* out, size_t out_len);
GraphFn g_eval = nullptr;
std::map<std::string, std::string> g_kinds;  // selector -> argument kinds, comma-separated, then "->" and the return

struct Spec {
  uint32_t dtype = 0;
  bool ranked = false;
  std::vector<long long> shape;
};
struct Graph {
  std::vector<std::string> nodes;  // JSON of each node
  std::vector<Spec> specs;
};
struct TensorRef {
  Graph* graph;
  int node;
};
struct Array {  // a buffer's elements as the host code describes them (MPSGraphTensorData, MPSNDArray)
  id buffer = nil;
  size_t offset = 0;
  uint32_t dtype = 0;
  std::vector<long long> shape;
  std::string steps;  // JSON list of view steps over the buffer, "" for a dense array of `shape`
};

std::unordered_map<void*, Graph*> g_graphs;
std::unordered_map<void*, TensorRef> g_tensors;
std::unordered_map<void*, Array> g_arrays;  // MPSGraphTensorData and MPSNDArray
std::unordered_map<void*, Array> g_descs;   // MPSNDArrayDescriptor: shape, dtype, pending transposes as steps

std::string num(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char b[40];
  snprintf(b, sizeof b, "%.17g", v);
  return b;
}

std::string ints(const std::vector<long long>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

std::vector<long long> shape_of(NSArray* a) {
  std::vector<long long> out;
  for (NSUInteger i = 0; i < [a count]; ++i) out.push_back([[a objectAtIndex:i] longLongValue]);
  return out;
}

NSArray* ns_shape(const std::vector<long long>& v) {
  NSMutableArray* a = [NSMutableArray arrayWithCapacity:v.size()];
  for (long long x : v) [a addObject:[NSNumber numberWithLongLong:x]];
  return a;
}

std::string call(const std::string& request) {
  if (!g_eval) throw std::runtime_error("MPSGraph emulation: no evaluator attached (mps_shim_set_graph_evaluator)");
  std::vector<char> buf(1 << 16);
  int rc = g_eval(request.c_str(), buf.data(), buf.size());
  if (rc != 0) throw std::runtime_error(std::string(buf.data()));
  return buf.data();
}

TensorRef& ref(id t) {
  auto it = g_tensors.find((void*)t);
  if (it == g_tensors.end()) throw std::runtime_error("MPSGraph emulation: an argument is not a graph tensor");
  return it->second;
}

Array& array(id a) {
  auto it = g_arrays.find((void*)a);
  if (it == g_arrays.end()) throw std::runtime_error("MPSGraph emulation: not a tensor data or NDArray");
  return it->second;
}

std::string array_json(const Array& a) {
  auto* base = (char*)[a.buffer contents];
  return "{\"ptr\":" + std::to_string((unsigned long long)(uintptr_t)(base + a.offset)) +
         ",\"nbytes\":" + std::to_string((long long)[a.buffer length] - (long long)a.offset) +
         ",\"dtype\":" + std::to_string(a.dtype) + ",\"shape\":" + ints(a.shape) +
         ",\"steps\":" + (a.steps.empty() ? "[]" : "[" + a.steps + "]") + "}";
}

}  // namespace

@implementation MPSGraphTensor
- (MPSDataType)dataType {
  TensorRef& r = ref(self);
  return r.graph->specs[r.node].dtype;
}
- (MPSShape*)shape {
  TensorRef& r = ref(self);
  Spec& s = r.graph->specs[r.node];
  return s.ranked ? ns_shape(s.shape) : nil;
}
- (MPSGraphOperation*)operation {
  return nil;
}
- (id)copyWithZone:(NSZone*)zone {
  return [self retain];
}
@end

@implementation MPSGraphShapedType
- (instancetype)initWithShape:(MPSShape*)s dataType:(MPSDataType)t {
  return [super init];
}
- (id)copyWithZone:(NSZone*)zone {
  return [self retain];
}
@end

namespace {

Graph* graph_of(id g) {
  return g_graphs.at((void*)g);
}

std::string infer(const std::string& json, const std::vector<id>& inputs) {
  std::string specs;
  for (id t : inputs) {
    TensorRef& r = ref(t);
    Spec& s = r.graph->specs[r.node];
    specs += (specs.empty() ? "" : ",") + std::string("\"") + std::to_string(r.node) + "\":{\"dtype\":" +
             std::to_string(s.dtype) + ",\"shape\":" + (s.ranked ? ints(s.shape) : "null") + "}";
  }
  return call("{\"op\":\"infer\",\"node\":" + json + ",\"inputs\":{" + specs + "}}");
}

MPSGraphTensor* add_tensor(id graph, const std::string& json, const std::string& line) {
  Graph* g = graph_of(graph);
  Spec s;
  std::stringstream ss(line);
  long long rank = -1;
  ss >> s.dtype >> rank;
  s.ranked = rank >= 0;
  for (long long i = 0; i < rank; ++i) {
    long long d;
    ss >> d;
    s.shape.push_back(d);
  }
  g->nodes.push_back(json);
  g->specs.push_back(s);
  MPSGraphTensor* t = [[MPSGraphTensor alloc] init];  // kept for the process (graphs are cached)
  g_tensors[(void*)t] = {g, (int)g->nodes.size() - 1};
  return t;
}

MPSGraphTensor* node(id graph, const std::string& json, const std::vector<id>& inputs) {
  return add_tensor(graph, json, infer(json, inputs));
}

NSArray* nodes(id graph, const std::string& json, const std::vector<id>& inputs) {
  std::string lines = infer(json, inputs);
  Graph* g = graph_of(graph);
  g->nodes.push_back(json);
  g->specs.push_back(Spec());
  int parent = (int)g->nodes.size() - 1;
  NSMutableArray* out = [NSMutableArray array];
  std::stringstream ss(lines);
  std::string line;
  for (int k = 0; std::getline(ss, line); ++k) {
    std::string j = "{\"sel\":\"#output\",\"args\":[{\"t\":" + std::to_string(parent) + "}," + std::to_string(k) + "]}";
    [out addObject:add_tensor(graph, j, line)];
  }
  return out;
}

}  // namespace

static id graph_send(id self, SEL sel, uintptr_t a0, uintptr_t a1, uintptr_t a2, uintptr_t a3, double d0,
                     double d1, double d2, double d3, double d4, double d5, double d6, double d7, uintptr_t a4,
                     uintptr_t a5, uintptr_t a6, uintptr_t a7) {
  std::string name = sel_getName(sel);
  auto it = g_kinds.find(name);
  const std::string& kinds = it->second;
  uintptr_t words[] = {a0, a1, a2, a3, a4, a5, a6, a7};
  double reals[] = {d0, d1, d2, d3, d4, d5, d6, d7};
  int wi = 0, di = 0;
  std::string args;
  std::vector<id> inputs;
  std::string ret = "t";
  std::stringstream ss(kinds);
  std::string kind;
  while (std::getline(ss, kind, ',')) {
    if (kind.rfind("->", 0) == 0) {
      ret = kind.substr(2);
      break;
    }
    std::string v;
    if (kind == "f") {
      v = num(reals[di++]);
    } else {
      uintptr_t w = words[wi++];
      if (kind == "t") {
        id t = (id)w;
        if (!t) {
          v = "null";
        } else {
          v = "{\"t\":" + std::to_string(ref(t).node) + "}";
          inputs.push_back(t);
        }
      } else if (kind == "ts") {
        NSArray* a = (NSArray*)w;
        v = "{\"ts\":[";
        for (NSUInteger i = 0; i < [a count]; ++i) {
          id t = [a objectAtIndex:i];
          v += (i ? "," : "") + std::to_string(ref(t).node);
          inputs.push_back(t);
        }
        v += "]}";
      } else if (kind == "ints") {
        v = w ? ints(shape_of((NSArray*)w)) : "null";
      } else if (kind == "i") {
        v = std::to_string((long long)(intptr_t)w);
      } else if (kind == "u") {
        v = std::to_string((unsigned long long)w);
      } else if (kind == "dt") {
        v = std::to_string((uint32_t)w);
      } else if (kind == "b") {
        v = (w & 0xff) ? "true" : "false";
      } else {  // a name or an ignored object
        v = "null";
      }
    }
    args += (args.empty() ? "" : ",") + v;
  }
  std::string json = "{\"sel\":\"" + name + "\",\"args\":[" + args + "]}";
  if (ret == "ts") return nodes(self, json, inputs);
  return node(self, json, inputs);
}

static id graph_not_emulated(id self, SEL sel, ...) {
  throw std::runtime_error(std::string("MPSGraph selector not emulated: -[MPSGraph ") + sel_getName(sel) +
                           "] (rules/mpsgraph.yaml has no entry)");
}

@implementation MPSGraph
+ (BOOL)resolveInstanceMethod:(SEL)sel {
  bool known = g_kinds.count(sel_getName(sel)) > 0;
  class_addMethod(self, sel, known ? (IMP)graph_send : (IMP)graph_not_emulated, "@@:");
  return YES;
}
- (instancetype)init {
  self = [super init];
  g_graphs[(void*)self] = new Graph();
  return self;
}
- (MPSGraphOptions)options {
  return MPSGraphOptionsNone;
}
- (void)setOptions:(MPSGraphOptions)o {
}
- (MPSGraphTensor*)placeholderWithShape:(MPSShape*)s dataType:(MPSDataType)t name:(NSString*)n {
  std::string json = "{\"sel\":\"#placeholder\",\"args\":[" + (s ? ints(shape_of(s)) : std::string("null")) + "," +
                     std::to_string(t) + "]}";
  return node(self, json, {});
}
- (MPSGraphTensor*)placeholderWithShape:(MPSShape*)s name:(NSString*)n {
  return [self placeholderWithShape:s dataType:MPSDataTypeFloat32 name:n];
}
- (MPSGraphTensor*)constantWithScalar:(double)v dataType:(MPSDataType)t {
  return node(self, "{\"sel\":\"constantWithScalar:dataType:\",\"args\":[" + num(v) + "," + std::to_string(t) + "]}", {});
}
- (MPSGraphTensor*)constantWithScalar:(double)v shape:(MPSShape*)s dataType:(MPSDataType)t {
  return node(self, "{\"sel\":\"constantWithScalar:shape:dataType:\",\"args\":[" + num(v) + "," + ints(shape_of(s)) +
                          "," + std::to_string(t) + "]}", {});
}
// Runs the graph: the evaluator reads the feeds and writes every result array.
- (void)shimRunFeeds:(NSDictionary*)feeds results:(NSDictionary*)results {
  Graph* g = graph_of(self);
  std::string all, fs, rs;
  for (size_t i = 0; i < g->nodes.size(); ++i) all += (i ? "," : "") + g->nodes[i];
  NSEnumerator* e = [feeds keyEnumerator];
  for (id k = [e nextObject]; k; k = [e nextObject])
    fs += (fs.empty() ? "" : ",") + std::string("{\"node\":") + std::to_string(ref(k).node) +
          ",\"data\":" + array_json(array([feeds objectForKey:k])) + "}";
  e = [results keyEnumerator];
  for (id k = [e nextObject]; k; k = [e nextObject])
    rs += (rs.empty() ? "" : ",") + std::string("{\"node\":") + std::to_string(ref(k).node) +
          ",\"data\":" + array_json(array([results objectForKey:k])) + "}";
  call("{\"op\":\"run\",\"nodes\":[" + all + "],\"feeds\":[" + fs + "],\"results\":[" + rs + "]}");
}
- (void)encodeToCommandBuffer:(MPSCommandBuffer*)cb
                        feeds:(MPSGraphTensorDataDictionary*)f
             targetOperations:(NSArray<MPSGraphOperation*>*)ops
            resultsDictionary:(MPSGraphTensorDataDictionary*)r
          executionDescriptor:(MPSGraphExecutionDescriptor*)d {
  [self shimRunFeeds:f results:r];
}
@end

extern "C" void mps_shim_run_graph(MPSGraph* graph, NSDictionary* feeds, NSDictionary* results) {
  [graph shimRunFeeds:feeds results:results];
}

@implementation MPSGraphTensorData
- (instancetype)initWithMTLBuffer:(id<MTLBuffer>)b shape:(MPSShape*)s dataType:(MPSDataType)t {
  self = [super init];
  Array a;
  a.buffer = b;
  a.dtype = t;
  a.shape = shape_of(s);
  g_arrays[(void*)self] = a;
  return self;
}
- (instancetype)initWithMTLBuffer:(id<MTLBuffer>)b shape:(MPSShape*)s dataType:(MPSDataType)t rowBytes:(NSUInteger)rb {
  return [self initWithMTLBuffer:b shape:s dataType:t];
}
- (instancetype)initWithMPSNDArray:(MPSNDArray*)nd {
  self = [super init];
  g_arrays[(void*)self] = array(nd);
  return self;
}
- (void)dealloc {
  g_arrays.erase((void*)self);
  [super dealloc];
}
- (MPSShape*)shape {
  return ns_shape(array(self).shape);
}
- (MPSDataType)dataType {
  return array(self).dtype;
}
- (MPSNDArray*)mpsndarray {
  MPSNDArray* nd = [[[MPSNDArray alloc] init] autorelease];
  g_arrays[(void*)nd] = array(self);
  return nd;
}
@end

// Dimension i of an NDArray (descriptor) counts from the fastest-varying one, as on Apple.
@implementation MPSNDArrayDescriptor
+ (instancetype)descriptorWithDataType:(MPSDataType)t shape:(MPSShape*)s {
  MPSNDArrayDescriptor* d = [[[self alloc] init] autorelease];
  Array a;
  a.dtype = t;
  a.shape = shape_of(s);
  g_descs[(void*)d] = a;
  return d;
}
- (void)dealloc {
  g_descs.erase((void*)self);
  [super dealloc];
}
- (MPSDataType)dataType {
  return g_descs.at((void*)self).dtype;
}
- (NSUInteger)numberOfDimensions {
  return g_descs.at((void*)self).shape.size();
}
- (void)setPreferPackedRows:(BOOL)b {
}
- (NSUInteger)lengthOfDimension:(NSUInteger)i {
  auto& s = g_descs.at((void*)self).shape;
  return s[s.size() - 1 - i];
}
- (MPSShape*)getShape {
  return ns_shape(g_descs.at((void*)self).shape);
}
- (void)transposeDimension:(NSUInteger)a withDimension:(NSUInteger)b {
  Array& d = g_descs.at((void*)self);
  long long r = d.shape.size();
  std::swap(d.shape[r - 1 - a], d.shape[r - 1 - b]);
  d.steps += (d.steps.empty() ? "" : ",") + std::string("[\"transpose\",") + std::to_string(r - 1 - a) + "," +
             std::to_string(r - 1 - b) + "]";
}
@end

@implementation MPSNDArray
- (instancetype)initWithBuffer:(id<MTLBuffer>)b offset:(NSUInteger)o descriptor:(MPSNDArrayDescriptor*)desc {
  self = [super init];
  Array a;
  a.buffer = b;
  a.offset = o;
  a.dtype = [desc dataType];
  a.shape = g_descs.at((void*)desc).shape;
  g_arrays[(void*)self] = a;
  return self;
}
- (instancetype)initWithDevice:(id<MTLDevice>)dev descriptor:(MPSNDArrayDescriptor*)desc {
  const Array& d = g_descs.at((void*)desc);
  long long n = 1;
  for (long long x : d.shape) n *= x;
  long long bits = d.dtype & 0xffff;
  id<MTLBuffer> b = [dev newBufferWithLength:(NSUInteger)std::max(1LL, n * bits / 8) options:0];
  return [self initWithBuffer:b offset:0 descriptor:desc];
}
- (void)dealloc {
  g_arrays.erase((void*)self);
  [super dealloc];
}
- (MPSDataType)dataType {
  return array(self).dtype;
}
- (NSUInteger)numberOfDimensions {
  return array(self).shape.size();
}
- (NSUInteger)lengthOfDimension:(NSUInteger)i {
  auto& s = array(self).shape;
  return s[s.size() - 1 - i];
}
- (id<MTLBuffer>)buffer {
  return array(self).buffer;
}
- (NSUInteger)offset {
  return array(self).offset;
}
- (MPSNDArrayDescriptor*)descriptor {
  const Array& a = array(self);
  return [MPSNDArrayDescriptor descriptorWithDataType:a.dtype shape:ns_shape(a.shape)];
}
- (MPSNDArray*)shimWith:(const std::string&)step shape:(const std::vector<long long>&)shape {
  MPSNDArray* nd = [[[MPSNDArray alloc] init] autorelease];
  Array a = array(self);
  if (a.steps.empty()) a.steps = "[\"dense\"," + ints(a.shape) + "]";
  if (!step.empty()) a.steps += "," + step;
  a.shape = shape;
  g_arrays[(void*)nd] = a;
  return nd;
}
- (MPSNDArray*)arrayViewWithShape:(MPSShape*)shape strides:(MPSShape*)strides {
  // a view of the whole buffer from the offset, as the strided placeholder makes it
  Array base = array(self);
  MPSNDArray* nd = [[[MPSNDArray alloc] init] autorelease];
  base.steps = "[\"strided\"," + ints(shape_of(shape)) + "," + ints(shape_of(strides)) + "]";
  base.shape = shape_of(shape);
  g_arrays[(void*)nd] = base;
  return nd;
}
- (MPSNDArray*)arrayViewWithCommandBuffer:(id<MTLCommandBuffer>)cb
                               descriptor:(MPSNDArrayDescriptor*)desc
                                 aliasing:(MPSAliasingStrategy)al {
  const Array& d = g_descs.at((void*)desc);
  return [self shimWith:d.steps shape:d.shape];
}
- (void)writeBytes:(void*)p strideBytes:(NSInteger*)s {
  const Array& a = array(self);
  long long n = 1;
  for (long long x : a.shape) n *= x;
  memcpy((char*)[a.buffer contents] + a.offset, p, n * ((a.dtype & 0xffff) / 8));
}
@end

@implementation MPSNDArrayIdentity
- (instancetype)initWithDevice:(id<MTLDevice>)d {
  return [super init];
}
- (MPSNDArray*)reshapeWithCommandBuffer:(id<MTLCommandBuffer>)cb
                            sourceArray:(MPSNDArray*)src
                                  shape:(MPSShape*)shape
                       destinationArray:(MPSNDArray*)dst {
  std::vector<long long> s = shape_of(shape);
  return [src shimWith:"[\"reshape\"," + ints(s) + "]" shape:s];
}
@end

extern "C" void mps_shim_set_graph_evaluator(GraphFn fn, const char* table) {
  g_eval = fn;
  g_kinds.clear();
  std::stringstream ss(table);
  std::string line;
  while (std::getline(ss, line)) {
    size_t sp = line.find(' ');
    if (sp != std::string::npos) g_kinds[line.substr(0, sp)] = line.substr(sp + 1);
  }
}
