"""torch.distributed.constants: the default timeouts of process groups and stores."""
import datetime

default_pg_timeout = datetime.timedelta(minutes=30)
default_pg_nccl_timeout = default_pg_timeout  # no NCCL here; the name exists for importers
