"""Writes row indices for gather_rows.mlir as an int32 .npy file.

    python3 make_row_ids.py COUNT TABLE_ROWS SEED OUT.npy

A random permutation of the table's rows (no row twice, so that the
scatter's writes do not race), with some entries -1 (masked off) and some
past the table (out of bounds: the gather reads padding, the scatter
writes nothing).
"""
import sys

import numpy as np

count, table_rows, seed = (int(a) for a in sys.argv[1:4])
rng = np.random.default_rng(seed)
ids = rng.permutation(max(count, table_rows))[:count].astype(np.int32)
ids[rng.random(count) < 0.05] = -1
np.save(sys.argv[4], ids)
