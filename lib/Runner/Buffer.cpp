//===- Buffer.cpp - Host buffers, element types and .npy files ------------===//

#include "ism/Runner/Buffer.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Parallel.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include <unistd.h>

using namespace mlir;
using namespace mlir::ism::runner;

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

llvm::StringRef mlir::ism::runner::getDTypeName(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::I8:
    return "i8";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::F8E4M3:
    return "f8e4m3";
  case DType::F8E5M2:
    return "f8e5m2";
  }
  llvm_unreachable("unknown dtype");
}

std::optional<DType> mlir::ism::runner::parseDType(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<DType>>(name)
      .Case("f16", DType::F16)
      .Case("bf16", DType::BF16)
      .Case("f32", DType::F32)
      .Case("f64", DType::F64)
      .Case("i8", DType::I8)
      .Case("i32", DType::I32)
      .Case("i64", DType::I64)
      .Cases({"f8e4m3", "f8E4M3FN"}, DType::F8E4M3)
      .Cases({"f8e5m2", "f8E5M2"}, DType::F8E5M2)
      .Default(std::nullopt);
}

std::optional<DType> mlir::ism::runner::getDType(Type type) {
  if (type.isF16())
    return DType::F16;
  if (type.isBF16())
    return DType::BF16;
  if (type.isF32())
    return DType::F32;
  if (type.isF64())
    return DType::F64;
  if (isa<Float8E4M3FNType>(type))
    return DType::F8E4M3;
  if (isa<Float8E5M2Type>(type))
    return DType::F8E5M2;
  if (type.isInteger(8))
    return DType::I8;
  if (type.isInteger(32))
    return DType::I32;
  if (type.isInteger(64) || type.isIndex())
    return DType::I64;
  return std::nullopt;
}

unsigned mlir::ism::runner::getDTypeSize(DType dtype) {
  switch (dtype) {
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::I8:
  case DType::F8E4M3:
  case DType::F8E5M2:
    return 1;
  }
  llvm_unreachable("unknown dtype");
}

bool mlir::ism::runner::isFloatDType(DType dtype) {
  return dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F32 ||
         dtype == DType::F64 || dtype == DType::F8E4M3 ||
         dtype == DType::F8E5M2;
}

//===----------------------------------------------------------------------===//
// 16-bit float conversions (round to nearest even)
//===----------------------------------------------------------------------===//

static uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

static float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// float -> IEEE half, round to nearest even (F. Giesen's method).
static uint16_t floatToHalf(float value) {
  uint32_t f = bitsOf(value);
  const uint32_t f32Infinity = 255u << 23;
  const uint32_t f16Max = (127u + 16) << 23;
  const uint32_t denormMagic = ((127u - 15) + (23 - 10) + 1) << 23;
  uint32_t sign = f & 0x80000000u;
  f ^= sign;
  uint16_t out;
  if (f >= f16Max) {
    out = f > f32Infinity ? 0x7e00 : 0x7c00;
  } else if (f < (113u << 23)) {
    float denorm = floatOf(f) + floatOf(denormMagic);
    out = static_cast<uint16_t>(bitsOf(denorm) - denormMagic);
  } else {
    uint32_t mantissaOdd = (f >> 13) & 1;
    f += (uint32_t(15 - 127) << 23) + 0xfff;
    f += mantissaOdd;
    out = static_cast<uint16_t>(f >> 13);
  }
  return out | static_cast<uint16_t>(sign >> 16);
}

static float halfToFloat(uint16_t h) {
  const uint32_t shiftedExponent = 0x7c00u << 13;
  uint32_t out = (h & 0x7fffu) << 13;
  uint32_t exponent = shiftedExponent & out;
  out += (127u - 15) << 23;
  if (exponent == shiftedExponent) {
    out += (128u - 16) << 23;
  } else if (exponent == 0) {
    out += 1u << 23;
    out = bitsOf(floatOf(out) - floatOf(113u << 23));
  }
  return floatOf(out | (uint32_t(h & 0x8000u) << 16));
}

static uint16_t floatToBF16(float value) {
  uint32_t u = bitsOf(value);
  if (std::isnan(value))
    return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

static float bf16ToFloat(uint16_t h) { return floatOf(uint32_t(h) << 16); }

//===----------------------------------------------------------------------===//
// 8-bit float conversions: round to nearest even, saturating to the largest
// finite value (infinities too; NaN stays NaN), as the GPU's
// cvt.rn.satfinite does
//===----------------------------------------------------------------------===//

static const llvm::fltSemantics &getFloat8Semantics(DType dtype) {
  return dtype == DType::F8E4M3 ? llvm::APFloat::Float8E4M3FN()
                                : llvm::APFloat::Float8E5M2();
}

static uint8_t doubleToFloat8(double value, DType dtype) {
  double largest = dtype == DType::F8E4M3 ? 448.0 : 57344.0;
  if (!std::isnan(value))
    value = std::fmax(-largest, std::fmin(largest, value));
  llvm::APFloat f(value);
  bool losesInfo;
  f.convert(getFloat8Semantics(dtype), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  return static_cast<uint8_t>(f.bitcastToAPInt().getZExtValue());
}

/// The 256 values of an 8-bit float type, decoded once.
static const std::array<double, 256> &getFloat8Values(DType dtype) {
  auto decode = [](DType t) {
    std::array<double, 256> values;
    for (unsigned bits = 0; bits < 256; ++bits)
      values[bits] = llvm::APFloat(getFloat8Semantics(t), llvm::APInt(8, bits))
                         .convertToDouble();
    return values;
  };
  static const std::array<double, 256> e4m3 = decode(DType::F8E4M3);
  static const std::array<double, 256> e5m2 = decode(DType::F8E5M2);
  return dtype == DType::F8E4M3 ? e4m3 : e5m2;
}

/// Wraps an integer to `bits` bits, sign-extended.
static int64_t wrapInt(double value, unsigned bits) {
  if (std::isnan(value))
    return 0;
  // Beyond 2^63 the conversion is undefined; saturate there, then wrap.
  double clamped = std::fmax(std::fmin(value, 9.2e18), -9.2e18);
  uint64_t u = static_cast<uint64_t>(static_cast<int64_t>(clamped));
  if (bits >= 64)
    return static_cast<int64_t>(u);
  u <<= 64 - bits;
  return static_cast<int64_t>(u) >> (64 - bits);
}

double mlir::ism::runner::roundToDType(double value, DType dtype) {
  switch (dtype) {
  case DType::F16:
    return halfToFloat(floatToHalf(static_cast<float>(value)));
  case DType::BF16:
    return bf16ToFloat(floatToBF16(static_cast<float>(value)));
  case DType::F32:
    return static_cast<float>(value);
  case DType::F64:
    return value;
  case DType::F8E4M3:
  case DType::F8E5M2:
    return getFloat8Values(dtype)[doubleToFloat8(value, dtype)];
  case DType::I8:
    return static_cast<double>(wrapInt(value, 8));
  case DType::I32:
    return static_cast<double>(wrapInt(value, 32));
  case DType::I64:
    return static_cast<double>(wrapInt(value, 64));
  }
  llvm_unreachable("unknown dtype");
}

//===----------------------------------------------------------------------===//
// Host memory limits
//===----------------------------------------------------------------------===//

/// The first unsigned number in file `path` after `key` (at the start of a
/// line; the whole file when `key` is empty), if any.
static std::optional<uint64_t> readNumber(const char *path,
                                          llvm::StringRef key = {}) {
  FILE *file = std::fopen(path, "r");
  if (!file)
    return std::nullopt;
  char line[256];
  std::optional<uint64_t> value;
  while (std::fgets(line, sizeof(line), file)) {
    llvm::StringRef text(line);
    if (!key.empty()) {
      if (!text.consume_front(key))
        continue;
      if (!text.starts_with(" ") && !text.starts_with(":") &&
          !text.starts_with("\t"))
        continue;
      text = text.ltrim(" :\t");
    }
    text = text.trim();
    llvm::StringRef digits =
        text.take_while([](char c) { return c >= '0' && c <= '9'; });
    uint64_t number;
    if (!digits.empty() && !digits.getAsInteger(10, number))
      value = number;
    break;
  }
  std::fclose(file);
  return value;
}

/// What the memory cgroup of the process leaves (limit - usage + inactive
/// file pages, which the kernel reclaims), when it has a limit.
static std::optional<uint64_t> getCgroupAvailable() {
  struct Files {
    const char *limit, *usage, *stat, *inactive;
  };
  // cgroup v2, then v1 (their roots as containers mount them).
  const Files files[] = {
      {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current",
       "/sys/fs/cgroup/memory.stat", "inactive_file"},
      {"/sys/fs/cgroup/memory/memory.limit_in_bytes",
       "/sys/fs/cgroup/memory/memory.usage_in_bytes",
       "/sys/fs/cgroup/memory/memory.stat", "total_inactive_file"}};
  for (const Files &f : files) {
    std::optional<uint64_t> limit = readNumber(f.limit);
    std::optional<uint64_t> usage = readNumber(f.usage);
    // "max" (v2) does not parse; v1 says "no limit" with a number near 2^63.
    if (!limit || !usage || *limit >= (uint64_t(1) << 60))
      continue;
    uint64_t inactive = readNumber(f.stat, f.inactive).value_or(0);
    uint64_t used = *usage > inactive ? *usage - inactive : 0;
    return *limit > used ? *limit - used : 0;
  }
  return std::nullopt;
}

uint64_t mlir::ism::runner::getAvailableHostMemory() {
  if (const char *limit = std::getenv("ISM_MEMORY_LIMIT")) {
    uint64_t bytes;
    if (!llvm::StringRef(limit).trim().getAsInteger(10, bytes))
      return bytes;
  }
  uint64_t available;
  if (std::optional<uint64_t> kb = readNumber("/proc/meminfo", "MemAvailable"))
    available = *kb * 1024;
  else
    available = uint64_t(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  if (std::optional<uint64_t> cgroup = getCgroupAvailable())
    available = std::min(available, *cgroup);
  return available;
}

llvm::Expected<int64_t>
mlir::ism::runner::getCheckedNumElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  bool overflow = false;
  for (auto [d, size] : llvm::enumerate(shape)) {
    if (size < 0)
      return llvm::createStringError(
          llvm::formatv("dimension {0} is {1}; sizes must not be negative", d,
                        size)
              .str());
    if (!overflow && __builtin_mul_overflow(n, size, &n))
      overflow = true;
  }
  // A zero size makes the product 0 even after an overflow.
  if (overflow && !llvm::is_contained(shape, 0)) {
    std::string text;
    for (auto [d, size] : llvm::enumerate(shape))
      text += (d ? "x" : "") + std::to_string(size);
    return llvm::createStringError("the shape " + text +
                                   " has more elements than fit in 64 bits "
                                   "(2^63 - 1)");
  }
  return overflow ? 0 : n;
}

llvm::Expected<uint64_t>
mlir::ism::runner::getBufferBytes(DType dtype, llvm::ArrayRef<int64_t> shape) {
  llvm::Expected<int64_t> n = getCheckedNumElements(shape);
  if (!n)
    return n.takeError();
  int64_t bytes;
  if (__builtin_mul_overflow(*n, int64_t(getDTypeSize(dtype)), &bytes))
    return llvm::createStringError(
        llvm::formatv("{0} elements of {1} are more than 2^63 - 1 bytes", *n,
                      getDTypeName(dtype))
            .str());
  return uint64_t(bytes);
}

llvm::Error mlir::ism::runner::checkHostMemory(uint64_t bytes,
                                               const llvm::Twine &what) {
  uint64_t available = getAvailableHostMemory();
  if (bytes <= available)
    return llvm::Error::success();
  return llvm::createStringError(what + " needs " + formatBytes(bytes) +
                                 ", more than the " + formatBytes(available) +
                                 " of memory available");
}

//===----------------------------------------------------------------------===//
// HostBuffer
//===----------------------------------------------------------------------===//

HostBuffer::HostBuffer(DType dtype, llvm::ArrayRef<int64_t> shape)
    : dtype(dtype), shape(shape.begin(), shape.end()) {
  bytes.assign(getNumElements() * getDTypeSize(dtype), 0);
}

llvm::Expected<HostBuffer> HostBuffer::create(DType dtype,
                                              llvm::ArrayRef<int64_t> shape) {
  llvm::Expected<uint64_t> size = getBufferBytes(dtype, shape);
  if (!size)
    return size.takeError();
  if (llvm::Error error =
          checkHostMemory(*size, llvm::formatv("a {0} buffer of {1} elements",
                                               getDTypeName(dtype),
                                               *size / getDTypeSize(dtype))))
    return std::move(error);
  return HostBuffer(dtype, shape);
}

int64_t HostBuffer::getNumElements() const {
  int64_t n = 1;
  for (int64_t size : shape)
    n *= size;
  return n;
}

double HostBuffer::get(int64_t i) const {
  const uint8_t *p = bytes.data() + i * getDTypeSize(dtype);
  switch (dtype) {
  case DType::F16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return halfToFloat(h);
  }
  case DType::BF16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return bf16ToFloat(h);
  }
  case DType::F32: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  case DType::F64: {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  case DType::I8:
    return static_cast<int8_t>(*p);
  case DType::F8E4M3:
  case DType::F8E5M2:
    return getFloat8Values(dtype)[*p];
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return static_cast<double>(v);
  }
  }
  llvm_unreachable("unknown dtype");
}

void HostBuffer::set(int64_t i, double value) {
  uint8_t *p = bytes.data() + i * getDTypeSize(dtype);
  switch (dtype) {
  case DType::F16: {
    uint16_t h = floatToHalf(static_cast<float>(value));
    std::memcpy(p, &h, 2);
    return;
  }
  case DType::BF16: {
    uint16_t h = floatToBF16(static_cast<float>(value));
    std::memcpy(p, &h, 2);
    return;
  }
  case DType::F32: {
    float f = static_cast<float>(value);
    std::memcpy(p, &f, 4);
    return;
  }
  case DType::F64:
    std::memcpy(p, &value, 8);
    return;
  case DType::I8:
    *p = static_cast<uint8_t>(wrapInt(value, 8));
    return;
  case DType::F8E4M3:
  case DType::F8E5M2:
    *p = doubleToFloat8(value, dtype);
    return;
  case DType::I32: {
    int32_t v = static_cast<int32_t>(wrapInt(value, 32));
    std::memcpy(p, &v, 4);
    return;
  }
  case DType::I64: {
    int64_t v = wrapInt(value, 64);
    std::memcpy(p, &v, 8);
    return;
  }
  }
}

std::vector<double> HostBuffer::toDoubles() const {
  std::vector<double> values(getNumElements());
  llvm::parallelFor(0, values.size(), [&](size_t i) {
    values[i] = get(static_cast<int64_t>(i));
  });
  return values;
}

void HostBuffer::poison() {
  if (!isFloatDType(dtype)) {
    std::memset(bytes.data(), 0xff, bytes.size());
    return;
  }
  int64_t n = getNumElements();
  double nan = std::numeric_limits<double>::quiet_NaN();
  for (int64_t i = 0; i < n; ++i)
    set(i, nan);
}

//===----------------------------------------------------------------------===//
// Initialisers
//===----------------------------------------------------------------------===//

std::optional<Init> mlir::ism::runner::parseInit(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Init>>(name)
      .Case("randn", Init::Randn)
      .Case("uniform", Init::Uniform)
      .Case("zeros", Init::Zeros)
      .Case("ones", Init::Ones)
      .Case("arange", Init::Arange)
      .Case("poison", Init::Poison)
      .Default(std::nullopt);
}

/// A counter-based generator: element i's random bits depend only on the
/// seed and i, so filling in parallel is deterministic.
static uint64_t splitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static double unitDouble(uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

void mlir::ism::runner::fill(HostBuffer &buffer, Init init, uint64_t seed,
                              double scale) {
  if (init == Init::Poison) {
    buffer.poison();
    return;
  }
  int64_t n = buffer.getNumElements();
  uint64_t key = splitMix64(seed * 0x2545f4914f6cdd1dull + 1);
  const int64_t chunk = 1 << 16;
  llvm::parallelFor(0, (n + chunk - 1) / chunk, [&](size_t c) {
    int64_t end = std::min<int64_t>(n, (c + 1) * chunk);
    for (int64_t i = c * chunk; i < end; ++i) {
      double value = 0;
      switch (init) {
      case Init::Randn: {
        // Box-Muller on two independent uniforms.
        double u1 = unitDouble(splitMix64(key ^ (2 * i)));
        double u2 = unitDouble(splitMix64(key ^ (2 * i + 1)));
        value = scale * std::sqrt(-2.0 * std::log1p(-u1)) *
                std::cos(2 * M_PI * u2);
        break;
      }
      case Init::Uniform:
        value = scale * (2.0 * unitDouble(splitMix64(key ^ i)) - 1.0);
        break;
      case Init::Zeros:
        value = 0;
        break;
      case Init::Ones:
        value = 1;
        break;
      case Init::Arange:
        value = static_cast<double>(i);
        break;
      case Init::Poison:
        break;
      }
      buffer.set(i, value);
    }
  });
}

//===----------------------------------------------------------------------===//
// .npy files
//===----------------------------------------------------------------------===//

/// The .npy descr of a dtype as written by writeNpy.
static llvm::StringRef getNpyDescr(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "<f2";
  case DType::BF16:
  case DType::F8E4M3:
  case DType::F8E5M2:
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::I8:
    return "|i1";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  }
  llvm_unreachable("unknown dtype");
}

llvm::Error mlir::ism::runner::writeNpy(llvm::StringRef path, DType dtype,
                                        llvm::ArrayRef<int64_t> shape,
                                        llvm::ArrayRef<double> values) {
  // numpy has no bf16 or 8-bit floats: they are written as float32.
  bool widen =
      dtype == DType::BF16 || dtype == DType::F8E4M3 || dtype == DType::F8E5M2;
  DType fileType = widen ? DType::F32 : dtype;
  llvm::Expected<HostBuffer> buffer = HostBuffer::create(fileType, shape);
  if (!buffer)
    return llvm::createStringError("cannot write '" + path.str() +
                                   "': " + llvm::toString(buffer.takeError()));
  for (size_t i = 0; i < values.size(); ++i)
    buffer->set(i, roundToDType(values[i], dtype));
  return writeNpy(path, *buffer);
}

llvm::Error mlir::ism::runner::writeNpy(llvm::StringRef path,
                                        const HostBuffer &buffer) {
  if (buffer.dtype == DType::BF16 || buffer.dtype == DType::F8E4M3 ||
      buffer.dtype == DType::F8E5M2) {
    // Written as float32, element by element (each is a float32).
    llvm::Expected<HostBuffer> wide =
        HostBuffer::create(DType::F32, buffer.shape);
    if (!wide)
      return llvm::createStringError("cannot write '" + path.str() +
                                     "': " + llvm::toString(wide.takeError()));
    for (int64_t i = 0, e = buffer.getNumElements(); i < e; ++i)
      wide->set(i, buffer.get(i));
    return writeNpy(path, *wide);
  }
  std::string header = "{'descr': '" + getNpyDescr(buffer.dtype).str() +
                       "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < buffer.shape.size(); ++i)
    header += (i ? ", " : "") + std::to_string(buffer.shape[i]);
  if (buffer.shape.size() == 1)
    header += ",";
  header += "), }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return llvm::createStringError("cannot write '" + path.str() +
                                   "': " + ec.message());
  os << "\x93NUMPY";
  os << char(1) << char(0);
  uint16_t length = static_cast<uint16_t>(header.size());
  os << char(length & 0xff) << char(length >> 8);
  os << header;
  os.write(reinterpret_cast<const char *>(buffer.bytes.data()),
           buffer.bytes.size());
  return llvm::Error::success();
}

llvm::Expected<HostBuffer>
mlir::ism::runner::readNpy(llvm::StringRef path, std::optional<DType> dtype) {
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError("cannot read '" + path.str() +
                                   "': " + why.str());
  };
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file)
    return fail(file.getError().message());
  llvm::StringRef data = (*file)->getBuffer();
  if (data.size() < 10 || !data.starts_with("\x93NUMPY"))
    return fail("not a .npy file");
  unsigned major = static_cast<uint8_t>(data[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = uint8_t(data[8]) | (uint8_t(data[9]) << 8);
    headerStart = 10;
  } else {
    if (data.size() < 12)
      return fail("truncated header");
    headerLength = uint8_t(data[8]) | (uint8_t(data[9]) << 8) |
                   (uint8_t(data[10]) << 16) |
                   (size_t(uint8_t(data[11])) << 24);
    headerStart = 12;
  }
  if (data.size() < headerStart + headerLength)
    return fail("truncated header");
  llvm::StringRef header = data.substr(headerStart, headerLength);

  auto field = [&](llvm::StringRef key) -> llvm::StringRef {
    size_t at = header.find("'" + key.str() + "'");
    if (at == llvm::StringRef::npos)
      return {};
    llvm::StringRef rest = header.substr(at + key.size() + 2).ltrim(" :");
    return rest;
  };
  llvm::StringRef descr = field("descr");
  if (!descr.consume_front("'"))
    return fail("no descr in the header");
  descr = descr.substr(0, descr.find('\''));
  if (field("fortran_order").starts_with("True"))
    return fail("Fortran-order arrays are not supported");
  llvm::StringRef shapeText = field("shape");
  if (!shapeText.consume_front("("))
    return fail("no shape in the header");
  shapeText = shapeText.substr(0, shapeText.find(')'));
  llvm::SmallVector<int64_t, 4> shape;
  llvm::SmallVector<llvm::StringRef, 4> parts;
  shapeText.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef part : parts) {
    part = part.trim();
    if (part.empty())
      continue;
    int64_t size;
    if (part.getAsInteger(10, size))
      return fail("bad shape '" + shapeText + "'");
    shape.push_back(size);
  }

  DType fileType;
  bool isUInt8 = false;
  if (descr == "<f2")
    fileType = DType::F16;
  else if (descr == "<f4")
    fileType = DType::F32;
  else if (descr == "<f8")
    fileType = DType::F64;
  else if (descr == "|i1" || descr == "<i1")
    fileType = DType::I8;
  else if (descr == "|u1" || descr == "<u1" || descr == "|b1") {
    fileType = DType::I8;
    isUInt8 = true;
  } else if (descr == "<i4")
    fileType = DType::I32;
  else if (descr == "<i8")
    fileType = DType::I64;
  else
    return fail("unsupported dtype '" + descr + "'");

  // The shape is checked against the file's size before anything is
  // allocated: a header may claim any shape.
  llvm::Expected<uint64_t> fileBytes = getBufferBytes(fileType, shape);
  if (!fileBytes)
    return fail("bad shape: " + llvm::toString(fileBytes.takeError()));
  size_t offset = headerStart + headerLength;
  if (data.size() - offset < *fileBytes)
    return fail(llvm::formatv("the file holds fewer elements than its shape "
                              "says ({0} bytes of data, the shape needs {1})",
                              data.size() - offset, *fileBytes)
                    .str());
  bool convert = (dtype && *dtype != fileType) || isUInt8;
  DType target = dtype ? *dtype : DType::I32;
  uint64_t needed = *fileBytes;
  if (convert) {
    llvm::Expected<uint64_t> convertedBytes = getBufferBytes(target, shape);
    if (!convertedBytes)
      return fail(llvm::toString(convertedBytes.takeError()));
    needed += *convertedBytes;
  }
  if (llvm::Error error = checkHostMemory(needed, "reading it"))
    return fail(llvm::toString(std::move(error)));
  HostBuffer raw(fileType, shape);
  if (!raw.bytes.empty()) // an empty vector's data() may be null
    std::memcpy(raw.bytes.data(), data.data() + offset, raw.bytes.size());
  if (!convert)
    return std::move(raw);
  HostBuffer converted(target, shape);
  for (int64_t i = 0, e = raw.getNumElements(); i < e; ++i) {
    double value = raw.get(i);
    if (isUInt8 && value < 0)
      value += 256;
    converted.set(i, value);
  }
  return std::move(converted);
}
