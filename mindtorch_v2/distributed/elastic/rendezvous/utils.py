"""torch.distributed.elastic.rendezvous.utils: parsing of --rdzv-conf and --rdzv-endpoint."""
import re


def _parse_rendezvous_config(config_str):
    """"key1=value1,key2=value2" as a dict (values are strings)."""
    config = {}
    config_str = config_str.strip()
    if not config_str:
        return config
    for kv in config_str.split(","):
        key, *values = kv.split("=", 1)
        key = key.strip()
        if not key:
            raise ValueError("The rendezvous configuration string must be in format <key1>=<value1>,...,<keyN>=<valueN>.")
        value = values[0].strip() if values else None
        if not value:
            raise ValueError(f"The rendezvous configuration option '{key}' must have a value specified.")
        config[key] = value
    return config


def _try_parse_port(port_str):
    if port_str and port_str.isdigit():
        return int(port_str)
    return None


def parse_rendezvous_endpoint(endpoint, default_port):
    """(host, port) of "host[:port]" ("[ipv6]:port" too); host defaults to localhost."""
    endpoint = endpoint.strip() if endpoint is not None else ""
    if not endpoint:
        return ("localhost", default_port)
    if endpoint[0] == "[" and endpoint[-1] == "]":
        host, *rest = endpoint, *[]
    else:
        host, *rest = endpoint.rsplit(":", 1)
    if len(host) > 1 and host[0] == "[" and host[-1] == "]":
        host = host[1:-1]
    if len(rest) == 1:
        port = _try_parse_port(rest[0])
        if port is None or port >= 2**16:
            raise ValueError(f"The port number of the rendezvous endpoint '{endpoint}' must be an integer between 0 and 65536.")
    else:
        port = default_port
    if not re.match(r"^[\w\.:-]+$", host):
        raise ValueError(f"The hostname of the rendezvous endpoint '{endpoint}' must be a dot-separated list of labels, an IPv4 address, or an IPv6 address.")
    return host, port
