"""Compares init-scale.test's saved buffers (f32 .npy files, read without
NumPy): x2 = 0.25 x1 (randn), y2 = -3 y1 (uniform), z2 = x2 + y2."""
import math
import struct
import sys


def load(path):
    data = open(path, "rb").read()
    assert data[:6] == b"\x93NUMPY", path
    (header,) = struct.unpack("<H", data[8:10])
    assert "'<f4'" in data[10:10 + header].decode(), path
    body = data[10 + header:]
    return struct.unpack(f"<{len(body) // 4}f", body)


def close(a, b):
    return all(math.isclose(p, q, rel_tol=1e-6, abs_tol=1e-30)
               for p, q in zip(a, b)) and len(a) == len(b)


d = sys.argv[1]
x1, y1, x2, y2, z2 = (load(f"{d}/{n}.npy")
                      for n in ("x1", "y1", "x2", "y2", "z2"))
std = math.sqrt(sum(v * v for v in x1) / len(x1))
assert close(x2, [0.25 * v for v in x1]), "randn*0.25"
print(f"randn: std {std:.3f}, randn*0.25: 0.25 x randn")
assert all(-1 <= v < 1 for v in y1) and close(y2, [-3 * v for v in y1])
print("uniform: within [-1, 1), uniform*-3: -3 x uniform")
assert all(math.isclose(z, x + y, rel_tol=1e-6, abs_tol=1e-6)
           for z, x, y in zip(z2, x2, y2))
print("z = x + y")
