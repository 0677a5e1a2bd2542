"""Writes a random CSR matrix as rowptr/colind/values .npy files.

    python3 make_csr.py ROWS COLS NNZ_PER_ROW SEED OUT_PREFIX

Rows get 0 to 2 x NNZ_PER_ROW nonzeros (some rows are empty, some need
several chunks of 32), column indices are uniform in [0, COLS).
"""
import sys

import numpy as np

rows, cols, per_row, seed = (int(a) for a in sys.argv[1:5])
prefix = sys.argv[5]
rng = np.random.default_rng(seed)
nnz = rng.integers(0, 2 * per_row + 1, rows)
rowptr = np.concatenate([[0], np.cumsum(nnz)]).astype(np.int32)
np.save(prefix + "rowptr.npy", rowptr)
np.save(prefix + "colind.npy",
        rng.integers(0, cols, int(rowptr[-1])).astype(np.int32))
np.save(prefix + "values.npy",
        rng.standard_normal(int(rowptr[-1])).astype(np.float32))
