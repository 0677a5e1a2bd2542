"""Writes row indices for gather_rows.mlir as an int32 .npy file.

    python3 make_row_ids.py COUNT TABLE_ROWS SEED OUT.npy

Every row of the table once, in random order (so that the scatter writes
each row of its output exactly once, without races), and COUNT -
TABLE_ROWS more entries, half -1 (masked off) and half past the table (out
of bounds: the gather reads padding, the scatter writes nothing), shuffled
in.
"""
import sys

import numpy as np

count, table_rows, seed = (int(a) for a in sys.argv[1:4])
rng = np.random.default_rng(seed)
assert count >= table_rows, "COUNT must cover the table's rows"
extra = count - table_rows
ids = np.concatenate([np.arange(table_rows),
                      np.full(extra // 2, -1),
                      table_rows + rng.integers(0, 100, extra - extra // 2)])
ids = rng.permutation(ids).astype(np.int32)
np.save(sys.argv[4], ids)
