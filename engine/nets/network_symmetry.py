"""The Internal Symmetry Network's weight tying (Blair 2008, section III and the Appendix): the
3x3 receptive field in one fixed order, the dihedral group D8 acting on it and on each hidden type,
and the equivariant kernels that the group averaging leaves (equivariant_basis()). Pure numpy;
engine/nets/network_forward.pyx builds the network's features from these kernels.
"""
import numpy as np

OFFSET_NAMES = ("O", "E", "N", "W", "S", "NE", "NW", "SW", "SE")
OFFSET_VECTORS = ((0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1))
OFFSET_ORBITS = (0, 1, 1, 1, 1, 2, 2, 2, 2)   # centre, edge neighbours, diagonal neighbours
NUM_OFFSETS = len(OFFSET_VECTORS)
HIDDEN_TYPES = ("T", "S", "D", "C", "F")

_ROTATION = np.array([[0, -1], [1, 0]])     # r[a, b] = [-b, a]
_REFLECTION = np.array([[-1, 0], [0, 1]])   # s[a, b] = [-a, b]
# The action of r and s on each hidden type (paper, section III). F transforms as the vector (a, b).
_REPRESENTATIONS = {
    "T": (np.eye(1), np.eye(1)),
    "S": (-np.eye(1), np.eye(1)),
    "D": (-np.eye(1), -np.eye(1)),
    "C": (np.eye(1), -np.eye(1)),
    "F": (_ROTATION.astype(float), _REFLECTION.astype(float)),
}


def symmetry_group(hidden_type="T"):
    """The 8 elements r^k s^m of D8 as (2x2 integer matrix acting on (east, north) offsets,
    representation matrix acting on a hidden unit of hidden_type)."""
    rho_r, rho_s = _REPRESENTATIONS[hidden_type]
    elements = []
    for k in range(4):
        for m in range(2):
            geometric = np.linalg.matrix_power(_ROTATION, k) @ np.linalg.matrix_power(_REFLECTION, m)
            internal = np.linalg.matrix_power(rho_r, k) @ np.linalg.matrix_power(rho_s, m)
            elements.append((geometric, internal))
    return elements


_BASIS_CACHE = {}


def equivariant_basis(hidden_type):
    """Basis of the 3x3 kernels V (shape (9, dim): offset x hidden component) that make a unit of
    hidden_type equivariant: V[g nu] = rho(g) V[nu] for all g in D8. The same constraint ties the
    input->hidden and the hidden->output kernels (paper, Appendix). Found by projecting every
    elementary kernel with the group average P(V)[nu] = 1/8 sum_g rho(g)^-1 V[g nu] and keeping
    a linearly independent set, each scaled so its entries are 0 or +-1."""
    if hidden_type in _BASIS_CACHE:
        return [b.copy() for b in _BASIS_CACHE[hidden_type]]
    index = {vector: k for k, vector in enumerate(OFFSET_VECTORS)}
    elements = symmetry_group(hidden_type)
    dim = elements[0][1].shape[0]
    basis = []
    for nu in range(NUM_OFFSETS):
        for component in range(dim):
            kernel = np.zeros((NUM_OFFSETS, dim))
            kernel[nu, component] = 1.0
            projected = np.zeros((NUM_OFFSETS, dim))
            for geometric, internal in elements:
                inverse = np.linalg.inv(internal)
                for k, vector in enumerate(OFFSET_VECTORS):
                    image = index[tuple(int(x) for x in geometric @ np.array(vector))]
                    projected[k] += inverse @ kernel[image]
            projected /= len(elements)
            if np.abs(projected).max() < 1e-12:
                continue
            candidate = projected / np.abs(projected).max()
            stacked = np.array([b.ravel() for b in basis] + [candidate.ravel()])
            if np.linalg.matrix_rank(stacked, tol=1e-9) > len(basis):
                basis.append(candidate)
    for b in basis:
        if not np.all(np.isin(np.round(b, 12), (-1.0, 0.0, 1.0))):
            raise AssertionError(f"basis kernel of {hidden_type} is not a signed 0/1 pattern: {b}")
        b[...] = np.round(b)
    _BASIS_CACHE[hidden_type] = basis
    return [b.copy() for b in basis]
