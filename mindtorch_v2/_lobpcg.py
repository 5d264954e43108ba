"""torch.lobpcg: a few extreme eigenpairs of a symmetric (generalized) eigenproblem A X = B X E by the
Locally Optimal Block Preconditioned Conjugate Gradient method, in its robust form (Duersch, Shao, Yang,
Gu 2018: Rayleigh-Ritz over B-orthonormalized bases, SVQB orthogonalization). Written over the public
ops; the same parameters, worker object (for trackers), convergence test and errors as PyTorch's."""
import mindtorch_v2 as torch

__all__ = ["lobpcg"]

_FEPS = {torch.float32: 1.2e-07, torch.float64: 2.23e-16}


def _apply(M, X):
    """M @ X, where a missing M (B or iK not given) is the identity"""
    return X if M is None else torch.matmul(M, X)


def _gram(M, S):
    return S.mT @ _apply(M, S)


def _eigh(M, largest):
    E, Z = torch.linalg.eigh(M, UPLO="U")
    return (E.flip(-1), Z.flip(-1)) if largest else (E, Z)


def _count_leading(flags):
    count = 0
    for f in flags.tolist():
        if not f:
            break
        count += 1
    return count


class LOBPCG:
    """The iteration state of one lobpcg run; a tracker receives it after every step and may set
    bvars["force_stop"]."""

    def __init__(self, A, B, X, iK, iparams, fparams, bparams, method, tracker):
        self.A, self.B, self.iK, self.X = A, B, iK, X
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.method, self.tracker = method, tracker
        m, n = iparams["m"], iparams["n"]
        self.E = torch.zeros((n,), dtype=X.dtype)
        self.R = torch.zeros((m, n), dtype=X.dtype)
        self.S = torch.zeros((m, 3 * n), dtype=X.dtype)  # the search basis [X, P, W]
        self.tvars, self.ivars, self.fvars, self.bvars = {}, {"istep": 0}, {"_": 0.0}, {"_": False}

    def __str__(self):
        fields = ["iparams", "fparams", "bparams", "ivars", "fvars", "bvars", "tvars", "A", "B", "iK", "X", "E"]
        return "LOBPCG:\n" + "".join(f"  {f}={getattr(self, f)}\n" for f in fields)

    def update(self):
        """One step (the first one also measures the norms the convergence test scales by)."""
        if not self.ivars["istep"]:
            x_norm = float(torch.norm(self.X))
            self.fvars["X_norm"] = x_norm
            self.fvars["A_norm"] = float(torch.norm(_apply(self.A, self.X))) / x_norm
            self.fvars["B_norm"] = float(torch.norm(_apply(self.B, self.X))) / x_norm
            self.ivars.update(iterations_left=self.iparams["niter"], converged_count=0, converged_end=0)
        (self._update_ortho if self.method == "ortho" else self._update_basic)()
        self.ivars["iterations_left"] -= 1
        self.ivars["istep"] += 1

    def update_residual(self):
        self.R = _apply(self.A, self.X) - _apply(self.B, self.X) * self.E

    def update_converged_count(self):
        """How many leading pairs pass the backward-stable test ||r|| / (||x|| (|A| + |e| |B|)) < tol."""
        previous = self.ivars["converged_count"]
        width = self.X.shape[-1]
        scale = self.fvars["A_norm"] + torch.abs(self.E[:width]) * self.fvars["B_norm"]
        rerr = torch.norm(self.R, 2, (0,)) / (torch.norm(self.X, 2, (0,)) * scale)
        count = _count_leading(rerr < self.fparams["tol"])
        if count < previous:
            raise AssertionError(f"the number of converged eigenpairs (was {previous}, got {count}) cannot decrease")
        self.ivars.update(converged_count=count)
        self.tvars["rerr"] = rerr
        return count

    def stop_iteration(self):
        return (self.bvars.get("force_stop", False) or self.ivars["iterations_left"] == 0
                or self.ivars["converged_count"] >= self.iparams["k"])

    def run(self):
        while True:
            self.update()
            if self.tracker is not None:
                self.call_tracker()
            if self.stop_iteration():
                return

    def call_tracker(self):
        self.tracker(self)

    def _store_x_p(self, P):
        """S = [X, P, ...]; returns P's width"""
        n = self.iparams["n"]
        self.S[:, :n] = self.X
        if P is None:
            return 0
        self.S[:, n:n + P.shape[-1]] = P
        return P.shape[-1]

    def _store_w(self, np_, W):
        """S = [X, P, W]: the columns from the first unconverged pair to converged_end are the next basis"""
        start = self.iparams["n"] + np_
        end = self.ivars["converged_end"] = start + W.shape[-1]
        self.S[:, start:end] = W

    def _update_basic(self):
        n, largest = self.iparams["n"], self.bparams["largest"]
        if not self.ivars["istep"]:
            T = self._rayleigh_ritz(self.X)
            E, Z = _eigh(T.mT @ _gram(self.A, self.X) @ T, largest)
            self.X[:] = self.X @ (T @ Z)
            self.E[:] = E
            self.update_residual()
            self.update_converged_count()
            self._store_w(self._store_x_p(None), _apply(self.iK, self.R))
            return
        nc, ns = self.ivars["converged_count"], self.ivars["converged_end"]
        S = self.S[:, nc:ns]
        T = self._rayleigh_ritz(S)
        E, Z = _eigh(T.mT @ _gram(self.A, S) @ T, largest)
        self.X[:, nc:] = S @ (T @ Z[:, :n - nc])
        self.E[nc:] = E[:n - nc]
        P = S @ (T @ Z[:, n:2 * n - nc])
        self.update_residual()
        nc = self.update_converged_count()
        self._store_w(self._store_x_p(P), _apply(self.iK, self.R[:, nc:]))

    def _update_ortho(self):
        n, largest = self.iparams["n"], self.bparams["largest"]
        if not self.ivars["istep"]:
            T = self._rayleigh_ritz(self.X)
            _, Z = _eigh(T.mT @ _gram(self.A, self.X) @ T, largest)
            self.X = self.X @ (T @ Z)  # E stays zero until the first full step, as in PyTorch
            self.update_residual()
            self.update_converged_count()
            self._store_w(self._store_x_p(None), self._get_ortho(self.R, self.X))
            return
        nc, ns = self.ivars["converged_count"], self.ivars["converged_end"]
        S = self.S[:, nc:ns]  # B-orthonormal by construction: no Rayleigh-Ritz transform
        E, Z = _eigh(_gram(self.A, S), largest)
        self.X[:, nc:] = S @ Z[:, :n - nc]
        self.E[nc:] = E[:n - nc]
        # P: the part of the new basis outside X's new columns, orthonormalized
        P = S @ (Z[:, n - nc:] @ torch.linalg.qr(Z[:n - nc, n - nc:].mT).Q)
        self.update_residual()
        nc = self.update_converged_count()
        np_ = self._store_x_p(P)
        self._store_w(np_, self._get_ortho(self.R[:, nc:], self.S[:, :n + np_]))

    def _rayleigh_ritz(self, S):
        """T with T^T (S^T B S) T = I: the Cholesky factor of the diagonally scaled Gram matrix, inverted"""
        G = _gram(self.B, S)
        d = G.diagonal(0, -2, -1) ** -0.5
        R = torch.linalg.cholesky((G * d) * d.reshape(-1, 1), upper=True)
        return torch.linalg.solve_triangular(R, d.diag_embed(), upper=True, left=False)

    def _get_svqb(self, U, drop, tau):
        """B-orthonormal columns spanning U (SVQB: the scaled Gram matrix's eigenbasis); eigenvalues under
        tau * max are dropped (drop) or raised to it."""
        if U.numel() == 0:
            return U
        G = _gram(self.B, U)
        nonzero = (G.diagonal(0, -2, -1).abs() != 0).nonzero().flatten()
        if nonzero.numel() < G.shape[-1]:  # exactly zero columns cannot be scaled: leave them out
            U = U[:, nonzero]
            if U.numel() == 0:
                return U
            G = _gram(self.B, U)
        d = G.diagonal(0, -2, -1) ** -0.5
        E, Z = _eigh(G * d.reshape(-1, 1) * d, False)
        floor = tau * E.abs().max()
        if drop:
            keep = (E > floor).nonzero().flatten()
            E, Z, d = E[keep], Z[:, keep], d[keep]
        else:
            E = torch.where(E < floor, floor, E)
        return (U * d) @ (Z * E ** -0.5)

    def _get_ortho(self, U, V):
        """U made B-orthonormal and B-orthogonal to the B-orthonormal V (empty when U lies in V's span),
        by repeated projection and SVQB; the relative errors of each round go to fvars."""
        tol = self.fparams["ortho_tol"]
        tol_drop, tol_replace = self.fparams["ortho_tol_drop"], self.fparams["ortho_tol_replace"]
        use_drop = self.bparams.get("ortho_use_drop")
        for key in [k for k in self.fvars if k.startswith("ortho_") and k.endswith("_rerr")]:
            del self.fvars[key]  # the previous call's
        for key in ("ortho_i", "ortho_j"):
            self.ivars.pop(key, None)
        BV_norm = torch.norm(_apply(self.B, V))
        BU = _apply(self.B, U)
        VBU = V.mT @ BU
        i = j = 0
        for i in range(self.iparams["ortho_i_max"]):
            U = U - V @ VBU
            for j in range(self.iparams["ortho_j_max"]):
                if use_drop:
                    U = self._get_svqb(U, j > 0, tol_drop if j == 0 else tol_replace)
                else:
                    U = self._get_svqb(U, False, tol_replace)
                if U.numel() == 0:
                    self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
                    return U
                BU = _apply(self.B, U)
                UBU = U.mT @ BU
                off = torch.norm(UBU - torch.eye(UBU.shape[-1], dtype=UBU.dtype))
                rerr = float(off) / float(torch.norm(BU) * torch.norm(U))
                self.fvars[f"ortho_UBUmI_rerr[{i}, {j}]"] = rerr
                if rerr < tol:
                    break
            VBU = V.mT @ BU
            rerr = float(torch.norm(VBU)) / float(BV_norm * torch.norm(U))
            self.fvars[f"ortho_VBU_rerr[{i}]"] = rerr
            if rerr < tol:
                break
            if self.iparams["m"] < U.shape[-1] + V.shape[-1]:
                if self.B is None:
                    raise AssertionError("B must not be None")
                raise ValueError(f"Overdetermined shape of U: #B-cols(={self.B.shape[-1]}) >= "
                                 f"#U-cols(={U.shape[-1]}) + #V-cols(={V.shape[-1]}) must hold")
        self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
        return U


def _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams, ortho_fparams, ortho_bparams):
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    dtype = A.dtype if A.dtype in (torch.float16, torch.float32, torch.float64) else torch.float32
    tol = _FEPS[dtype] ** 0.5 if tol is None else tol
    m = A.shape[-1]
    if k is None:
        k = 1 if X is None else X.shape[-1]
    if X is not None:  # X's width wins over n
        n = X.shape[-1]
    elif n is None:
        n = k
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller than "
                         f"3 x the number of requested eigenpairs (={n})")
    method = method or "ortho"
    iparams = {"m": m, "n": n, "k": k, "niter": 1000 if niter is None else niter}
    fparams = {"tol": tol}
    bparams = {"largest": largest is None or largest}
    if method == "ortho":
        iparams.update(ortho_iparams or {})
        fparams.update(ortho_fparams or {})
        bparams.update(ortho_bparams or {})
        for key, default in (("ortho_i_max", 3), ("ortho_j_max", 3)):
            iparams.setdefault(key, default)
        for key in ("ortho_tol", "ortho_tol_drop", "ortho_tol_replace"):
            fparams.setdefault(key, tol)
        bparams.setdefault("ortho_use_drop", False)

    def solve_one(A_, B_, X_, **extra):
        X_ = torch.randn((m, n), dtype=dtype) if X_ is None else X_
        if not (X_.dim() == 2 and tuple(X_.shape) == (m, n)):
            name = "X_" if extra else "X"  # PyTorch's name for a batch's slice
            raise AssertionError(f"{name} shape mismatch: got {X_.shape}, expected {(m, n)}")
        worker = LOBPCG(A_, B_, X_, iK, dict(iparams, **extra), fparams, bparams, method, tracker)
        worker.run()
        values, vectors = worker.E, worker.X
        return values[:k], vectors[:, :k]

    if A.dim() == 2:
        return solve_one(A, B, X)
    batch = A.shape[:-2]
    flat = lambda t: None if t is None else t.reshape((-1,) + tuple(t.shape[-2:]))  # noqa: E731
    bA, bB, bX = flat(A), flat(B), flat(X)
    results = [solve_one(bA[i], None if bB is None else bB[i], None if bX is None else bX[i], batch_index=i)
               for i in range(bA.shape[0])]
    E = torch.stack([e for e, _ in results]).to(dtype) if results else torch.empty((0, k), dtype=dtype)
    U = torch.stack([u for _, u in results]).to(dtype) if results else torch.empty((0, m, k), dtype=dtype)
    return E.reshape(batch + (k,)), U.reshape(batch + (m, k))


def _eigenpairs_backward(D_grad, U_grad, A, D, U):
    """The gradient w.r.t. symmetric A of k eigenpairs (D, U) of A: the classic formula inside span(U)
    plus, outside it, the solution of each pair's shifted system on the orthogonal complement Q:
    -Q (Q^T A Q - d_j)^-1 Q^T g_j u_j^T."""
    k, m = D.shape[-1], A.shape[-1]
    if D_grad is None:
        D_grad = torch.zeros_like(D)
    if U_grad is None:
        U_grad = torch.zeros_like(U)
    gap = D.unsqueeze(-2) - D.unsqueeze(-1)
    eye_k = torch.eye(k, dtype=A.dtype)
    F = torch.where(eye_k.bool(), torch.zeros((), dtype=A.dtype), 1 / torch.where(eye_k.bool(), 1.0, gap))
    Ut = U.mT
    grad = U @ ((torch.diag_embed(D_grad) + (Ut @ U_grad) * F) @ Ut)
    if k < m:
        Q = torch.linalg.qr(U, mode="complete").Q[..., k:]
        shifted = (Q.mT @ A @ Q).unsqueeze(-3) - D[..., :, None, None] * torch.eye(m - k, dtype=A.dtype)
        rhs = (Q.mT @ U_grad).mT.unsqueeze(-1)  # one column of Q^T g_j per pair j
        Y = torch.linalg.solve(shifted, rhs).squeeze(-1).mT
        grad = grad - Q @ Y @ Ut
    return grad


class LOBPCGAutogradFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, A, k, B, X, n, iK, niter, tol, largest, method, tracker, oi, of, ob):
        A = A if A.is_sparse else A.contiguous()
        B = B if B is None or B.is_sparse else B.contiguous()
        D, U = _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, oi, of, ob)
        ctx.save_for_backward(A, D, U, B)
        return D, U

    @staticmethod
    def backward(ctx, D_grad, U_grad):
        A, D, U, B = ctx.saved_tensors
        sparse_b = B is not None and B.is_sparse and ctx.needs_input_grad[2]
        if A.is_sparse or sparse_b:
            raise ValueError("lobpcg.backward does not support sparse input yet. Note that lobpcg.forward does "
                             "though.")
        if A.is_complex() or (B is not None and B.is_complex()):
            raise ValueError("lobpcg.backward does not support complex input yet. Note that lobpcg.forward does "
                             "though.")
        if B is not None:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")
        return (_eigenpairs_backward(D_grad, U_grad, A, D, U),) + (None,) * 13


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None,
           tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """The k largest (or smallest) eigenpairs of the symmetric positive definite generalized problem
    A X = B X E; differentiable w.r.t. A (through its symmetric part) when B is not given."""
    args = (k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams, ortho_fparams, ortho_bparams)
    if any(M is not None and M.requires_grad for M in (A, B)):
        # symmetrized so that the gradient is symmetric too (A - lr * grad stays symmetric)
        A_sym = (A + A.mT) / 2
        B_sym = None if B is None else (B + B.mT) / 2
        return LOBPCGAutogradFunction.apply(A_sym, k, B_sym, *args[2:])
    return _lobpcg(A, *args)
