"""torch._dynamo.exc: the exception types code may catch."""


class TorchDynamoException(RuntimeError):
    pass


class Unsupported(TorchDynamoException):
    pass


class InternalTorchDynamoError(TorchDynamoException):
    pass


class BackendCompilerFailed(TorchDynamoException):
    pass


class RecompileError(TorchDynamoException):
    pass
