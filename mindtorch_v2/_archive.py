"""PyTorch's zip container (what torch.save writes through miniz), written and read here.

Writer: records are stored (no compression), each record's data starts on a 64-byte boundary
(padding in an "FB" extra field), sizes go in a data descriptor after the data, the archive
always ends with a zip64 end-of-central-directory record, and `.data/serialization_id` is
computed as PyTorch computes it, so files are byte-for-byte what PyTorch 2.13 writes.

Reader: parses the central directory itself (zip64 aware) and checks every offset and size
against the file, so a crafted archive raises instead of reading out of bounds.
"""
import collections
import os
import struct
import zlib

ALIGNMENT = 64
_U32 = 0xFFFFFFFF
_M64 = (1 << 64) - 1
_LOCAL = struct.Struct("<IHHHHHIIIHH")          # 30 bytes
_CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")  # 46 bytes
_EOCD = struct.Struct("<IHHHHIIH")              # 22 bytes
_EOCD64 = struct.Struct("<IQHHIIQQQQ")          # 56 bytes
_LOC64 = struct.Struct("<IIQI")                 # 20 bytes
MAX_FORMAT_VERSION = 10                          # caffe2/serialize/versions.h kMaxSupportedFileFormatVersion
MIN_FORMAT_VERSION = 1


# ---- the serialization id (libstdc++ std::hash + std::unordered_set iteration order) ------

def _shift_mix(v):
    return v ^ (v >> 47)


def _std_hash(data, seed=0xC70F6907):
    """libstdc++'s _Hash_bytes for 64-bit size_t (std::hash<std::string>)."""
    mul = 0xC6A4A7935BD1E995
    n = len(data)
    h = (seed ^ (n * mul)) & _M64
    aligned = n & ~7
    for i in range(0, aligned, 8):
        d = (_shift_mix((int.from_bytes(data[i:i + 8], "little") * mul) & _M64) * mul) & _M64
        h = ((h ^ d) * mul) & _M64
    if n & 7:
        h = ((h ^ int.from_bytes(data[aligned:], "little")) * mul) & _M64
    return _shift_mix((_shift_mix(h) * mul) & _M64)


def _hash_combine(seed, value):
    """c10::hash_combine for 64-bit values."""
    return (seed ^ ((value + 0x9E3779B9 + ((seed << 6) & _M64) + (seed >> 2)) & _M64)) & _M64


_FAST_BUCKETS = (2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13)
# libstdc++'s __prime_list from 13 on (its rehash policy picks bucket counts from it)
_PRIMES = (13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 103, 109, 113, 127,
           137, 139, 149, 157, 167, 179, 193, 199, 211, 227, 241, 257, 277, 293, 313, 337, 359, 383, 409, 439, 467,
           503, 541, 577, 619, 661, 709, 761, 823, 887, 953, 1031, 1109, 1193, 1289, 1381, 1493, 1613, 1741, 1879,
           2029, 2179, 2357, 2549, 2753, 2971, 3209, 3469, 3739, 4027, 4349, 4703, 5087, 5503, 5953, 6427, 6949,
           7517, 8123, 8783, 9497, 10273, 11113, 12011, 12983, 14033, 15173, 16411, 17749, 19183, 20753, 22447,
           24281, 26267, 28411, 30727, 33223, 35933, 38873, 42043, 45481, 49201, 53201, 57557, 62233, 67307, 72817,
           78779, 85229, 92203, 99733, 107897, 116731, 126271, 136607, 147793, 159871, 172933, 187091, 202409,
           218971, 236897, 256279, 277261, 299951, 324503, 351061, 379787, 410857, 444487, 480881, 520241, 562841,
           608903, 658753, 712697, 771049, 834181, 902483, 976369)


def _next_buckets(n):
    if n < len(_FAST_BUCKETS):
        return _FAST_BUCKETS[n]
    return next((p for p in _PRIMES if p >= n), None)


def _unordered_set_order(names):
    """Iteration order of a std::unordered_set<std::string> after inserting names in order (libstdc++:
    a node goes to the front of its bucket's group, a new bucket's group to the front of the list;
    a rehash re-inserts the nodes in iteration order; the prime policy starts at 13 buckets)."""
    buckets, next_resize = 1, 0
    groups, order = {}, collections.deque()

    def insert(node):
        b = node[0] % buckets
        if b in groups:
            groups[b].insert(0, node)
        else:
            groups[b] = [node]
            order.appendleft(b)

    for i, name in enumerate(names):
        if i + 1 > next_resize:
            need = max(i + 1, 11 if next_resize == 0 else 0)
            if need >= buckets:
                new = _next_buckets(max(need + 1, buckets * 2))
                if new is None:
                    return None
                flat = [node for b in order for node in groups[b]]
                buckets = next_resize = new
                groups, order = {}, collections.deque()
                for node in flat:
                    insert(node)
            else:
                next_resize = buckets
        insert((_std_hash(name.encode()), name))
    return [name for b in order for _, name in groups[b]]


def serialization_id(record_names, record_crcs):
    order = _unordered_set_order(record_names)
    name_hash = 0
    for name in (order if order is not None else record_names):
        name_hash = _hash_combine(name_hash, _std_hash(name.encode()))
    crc_hash = 0
    for c in record_crcs:
        crc_hash = _hash_combine(crc_hash, c)
    return f"{name_hash:020d}{crc_hash:020d}"


# ---- writer -----------------------------------------------------------------------------------

def archive_name_for(path):
    """PyTorchStreamWriter's archive name: the file's basename without its extension."""
    name = os.fspath(path)
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    if "." in base:
        base = base[:base.rindex(".")]
    if not base:
        raise RuntimeError(f"invalid file name: {name}")
    return base


class ArchiveWriter:
    def __init__(self, f, archive_name="archive", compute_crc32=True):
        self.f = f
        self.prefix = archive_name + "/"
        self.crc = compute_crc32
        self.pos = 0
        self.entries = []      # (full name, crc, size, local header offset)
        self.names = []        # record names in write order (without the prefix)
        self.crcs = []

    def _write(self, data):
        self.f.write(data)
        self.pos += len(data) if not isinstance(data, memoryview) else data.nbytes

    def write_record(self, name, data):
        """Write one stored record; data is bytes or any buffer (storage memory, written without a copy)."""
        mv = memoryview(data).cast("B") if not isinstance(data, (bytes, bytearray)) else data
        size = len(mv)
        full = (self.prefix + name).encode("utf-8")
        offset = self.pos
        zip64 = size >= _U32 or offset >= _U32
        z64 = b""
        if zip64:  # miniz's zip64 extended info: (uncompressed, compressed) sizes if big, then the offset
            body = (struct.pack("<QQ", size, size) if size >= _U32 else b"") + \
                   (struct.pack("<Q", offset) if offset >= _U32 else b"")
            z64 = struct.pack("<HH", 1, len(body)) + body
        start = offset + _LOCAL.size + len(full) + len(z64) + 4
        pad = (-start) % ALIGNMENT
        extra = z64 + b"FB" + struct.pack("<H", pad) + b"Z" * pad
        flags = 0x0808 if size else 0x0800  # utf-8 names; sizes in a data descriptor (none for empty records)
        self._write(_LOCAL.pack(0x04034B50, 0, flags, 0, 0, 0, 0, 0, 0, len(full), len(extra)) + full + extra)
        crc = zlib.crc32(mv) & _U32 if self.crc else 0
        if size:
            self._write(mv)
            self._write(struct.pack("<IIQQ" if zip64 else "<IIII", 0x08074B50, crc, size, size))
        self.entries.append((full, crc, size, offset, flags))
        self.names.append(name)
        if size:  # PyTorch folds only non-empty records into the id's checksum part
            self.crcs.append(crc)

    def write_end_of_file(self):
        self.write_record("version", b"3\n")
        self.write_record(".data/serialization_id", serialization_id(self.names, self.crcs).encode())
        cd_start = self.pos
        for full, crc, size, offset, flags in self.entries:
            body = (struct.pack("<QQ", size, size) if size >= _U32 else b"") + \
                   (struct.pack("<Q", offset) if offset >= _U32 else b"")
            extra = struct.pack("<HH", 1, len(body)) + body if body else b""
            self._write(_CENTRAL.pack(0x02014B50, 0, 0, flags, 0, 0, 0, crc, min(size, _U32), min(size, _U32),
                                      len(full), len(extra), 0, 0, 0, 0, min(offset, _U32)) + full + extra)
        cd_size = self.pos - cd_start
        n = len(self.entries)
        eocd64 = self.pos
        self._write(_EOCD64.pack(0x06064B50, 44, 0x031E, 0x2D, 0, 0, n, n, cd_size, cd_start))
        self._write(_LOC64.pack(0x07064B50, 0, eocd64, 1))
        self._write(_EOCD.pack(0x06054B50, 0, 0, min(n, 0xFFFF), min(n, 0xFFFF), min(cd_size, _U32),
                               min(cd_start, _U32), 0))


# ---- reader -----------------------------------------------------------------------------------

def _bad(what):
    return RuntimeError(f"PytorchStreamReader failed reading zip archive: {what}")


class ArchiveReader:
    """Random access to the records of a PyTorch zip archive held in a seekable file object."""

    def __init__(self, f):
        self.f = f
        self.base = f.tell()
        f.seek(0, os.SEEK_END)
        self.size = f.tell() - self.base
        self.records = {}
        self._read_directory()
        names = list(self.records)
        if not names:
            raise _bad("archive has no records")
        first = names[0]
        if "/" not in first:
            raise RuntimeError(f"file in archive is not in a subdirectory: {first}")
        self.prefix = first[:first.index("/") + 1]
        self.version = self._read_version()

    def _read_at(self, offset, n):
        if offset < 0 or n < 0 or offset + n > self.size:
            raise _bad("a record lies outside the file")
        self.f.seek(self.base + offset)
        data = self.f.read(n)
        if len(data) != n:
            raise _bad("unexpected end of file")
        return data

    def _read_directory(self):
        tail = min(self.size, 65535 + _EOCD.size)
        buf = self._read_at(self.size - tail, tail)
        at = buf.rfind(b"PK\x05\x06")
        if at < 0 or at + _EOCD.size > len(buf):
            raise _bad("failed finding central directory")
        eocd_pos = self.size - tail + at
        _, _, _, _, count, cd_size, cd_offset, _ = _EOCD.unpack_from(buf, at)
        if eocd_pos >= _LOC64.size:
            loc = self._read_at(eocd_pos - _LOC64.size, _LOC64.size)
            sig, _, eocd64_pos, _ = _LOC64.unpack(loc)
            if sig == 0x07064B50:
                rec = self._read_at(eocd64_pos, _EOCD64.size)
                sig, _, _, _, _, _, _, count, cd_size, cd_offset = _EOCD64.unpack(rec)
                if sig != 0x06064B50:
                    raise _bad("invalid zip64 end of central directory")
        if cd_offset + cd_size > self.size or count > cd_size // _CENTRAL.size + 1:
            raise _bad("invalid central directory")
        cd = self._read_at(cd_offset, cd_size)
        pos = 0
        for _ in range(count):
            if pos + _CENTRAL.size > len(cd):
                raise _bad("truncated central directory")
            (sig, _, _, flags, method, _, _, crc, csize, usize, nlen, elen, clen, _, _, _,
             offset) = _CENTRAL.unpack_from(cd, pos)
            if sig != 0x02014B50:
                raise _bad("invalid central directory entry")
            pos += _CENTRAL.size
            if pos + nlen + elen + clen > len(cd):
                raise _bad("truncated central directory")
            name = cd[pos:pos + nlen].decode("utf-8", "replace")
            usize, csize, offset = self._zip64(cd[pos + nlen:pos + nlen + elen], usize, csize, offset)
            pos += nlen + elen + clen
            if flags & 1:
                raise _bad(f"record {name} is encrypted")
            if method not in (0, 8):
                raise _bad(f"record {name} uses unsupported compression method {method}")
            if method == 0 and csize != usize:
                raise _bad(f"record {name} has inconsistent sizes")
            self.records[name] = (offset, csize, usize, method)

    @staticmethod
    def _zip64(extra, usize, csize, offset):
        p = 0
        while p + 4 <= len(extra):
            hid, hlen = struct.unpack_from("<HH", extra, p)
            body = extra[p + 4:p + 4 + hlen]
            if hid == 1:
                q = 0
                vals = []
                for v in (usize, csize, offset):
                    if v == _U32:
                        if q + 8 > len(body):
                            raise _bad("truncated zip64 extra field")
                        v = struct.unpack_from("<Q", body, q)[0]
                        q += 8
                    vals.append(v)
                return tuple(vals)
            p += 4 + hlen
        return usize, csize, offset

    def _read_version(self):
        for name in (".data/version", "version"):
            if self.has_record(name):
                text = self.get_record(name).decode("ascii", "replace").strip()
                try:
                    version = int(text)
                except ValueError:
                    raise RuntimeError(f"PytorchStreamReader failed reading file version: {text!r}") from None
                if version < MIN_FORMAT_VERSION:
                    raise RuntimeError(f"Attempted to read a PyTorch file with version {version}, but the minimum "
                                       f"supported version for reading is {MIN_FORMAT_VERSION}. Your PyTorch script "
                                       "module file is too old. Please regenerate it with latest version of PyTorch "
                                       "to mitigate this issue.")
                if version > MAX_FORMAT_VERSION:
                    raise RuntimeError(f"Attempted to read a PyTorch file with version {version}, but the maximum "
                                       f"supported version for reading is {MAX_FORMAT_VERSION}. Your PyTorch "
                                       "installation may be too old.")
                return version
        raise RuntimeError("PytorchStreamReader failed locating file .data/version: file not found")

    def has_record(self, name):
        return self.prefix + name in self.records if hasattr(self, "prefix") else False

    def get_all_records(self):
        n = len(self.prefix)
        return [k[n:] for k in self.records if k.startswith(self.prefix)]

    def _entry(self, name):
        try:
            return self.records[self.prefix + name]
        except KeyError:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found") from None

    def get_record_offset(self, name):
        """Where the record's bytes start in the file (checked to lie inside it)."""
        offset, csize, _, _ = self._entry(name)
        head = self._read_at(offset, _LOCAL.size)
        sig, _, _, _, _, _, _, _, _, nlen, elen = _LOCAL.unpack(head)
        if sig != 0x04034B50:
            raise _bad(f"invalid local header for record {name}")
        data = offset + _LOCAL.size + nlen + elen
        if data + csize > self.size:
            raise _bad(f"record {name} lies outside the file")
        return data

    def record_size(self, name):
        return self._entry(name)[2]

    def is_stored(self, name):
        return self._entry(name)[3] == 0

    def get_record(self, name):
        offset, csize, usize, method = self._entry(name)
        data = self._read_at(self.get_record_offset(name), csize)
        if method == 8:
            try:
                d = zlib.decompressobj(-15)
                data = d.decompress(data, usize) + d.flush()
            except zlib.error as e:
                raise _bad(f"record {name} is corrupt: {e}") from None
            if len(data) != usize:
                raise _bad(f"record {name} has the wrong size")
        return data

    def read_record_into(self, name, view):
        """Fill the writable buffer view (exactly the record's size) with the record's bytes."""
        if not self.is_stored(name):
            view[:] = self.get_record(name)
            return
        n = self.record_size(name)
        if len(view) != n:
            raise RuntimeError(f"record {name} has {n} bytes, expected {len(view)}")
        self.f.seek(self.base + self.get_record_offset(name))
        got = 0
        readinto = getattr(self.f, "readinto", None)
        while got < n:
            if readinto is not None:
                k = readinto(view[got:])
            else:
                chunk = self.f.read(n - got)
                k = len(chunk)
                view[got:got + k] = chunk
            if not k:
                raise _bad("unexpected end of file")
            got += k

    def serialization_id(self):
        return self.get_record(".data/serialization_id").decode() if self.has_record(".data/serialization_id") \
            else ""


# ---- torch._C.PyTorchFileReader / PyTorchFileWriter: the archive as PyTorch's C++ classes expose it ------

def _open(file, mode):
    """(file object, whether we opened it) for a path or an already open binary file."""
    if isinstance(file, (str, os.PathLike)):
        return open(file, mode), True
    return file, False


class PyTorchFileReader:
    def __init__(self, file):
        self._f, self._owned = _open(file, "rb")
        self._reader = ArchiveReader(self._f)

    def __del__(self):
        if getattr(self, "_owned", False):
            self._f.close()

    def get_all_records(self):
        return self._reader.get_all_records()

    def has_record(self, name):
        return self._reader.has_record(name)

    def get_record(self, name):
        return self._reader.get_record(name)

    def get_record_offset(self, name):
        return self._reader.get_record_offset(name)

    def get_record_size(self, name):
        return self._reader.record_size(name)

    def serialization_id(self):
        return self._reader.serialization_id()

    def get_storage_from_record(self, name, numel, dtype):
        """A size-0 tensor of `dtype` (a dtype or a storage class) over a storage holding the record."""
        from . import _dtype
        from .storage import UntypedStorage
        from ._creation import empty
        if not isinstance(dtype, _dtype.dtype):
            dtype = getattr(dtype, "dtype", _dtype.uint8) if dtype is not UntypedStorage else _dtype.uint8
        storage = UntypedStorage(numel * dtype.itemsize)
        if numel:
            from ._C import ffi
            self._reader.read_record_into(name, memoryview(ffi.buffer(ffi.cast("char *", storage.data_ptr()),
                                                                      storage.nbytes())))
        return empty(0, dtype=dtype).set_(storage, 0, (0,))


class PyTorchFileWriter:
    def __init__(self, file, compute_crc32=True, storage_alignment=64):
        if storage_alignment != ALIGNMENT:
            raise NotImplementedError(f"PyTorchFileWriter: storage_alignment={storage_alignment} (only {ALIGNMENT})")
        self._f, self._owned = _open(file, "wb")
        name = archive_name_for(file) if self._owned else "archive"
        self._writer = ArchiveWriter(self._f, name, compute_crc32)
        self._ended = False

    def archive_name(self):
        return self._writer.prefix[:-1]

    def write_record(self, name, data, size):
        """data: bytes, a str, a storage, or an address (int) of `size` bytes."""
        if isinstance(data, int):
            from ._C import ffi
            data = ffi.buffer(ffi.cast("char *", data), size) if size else b""
        elif isinstance(data, str):
            data = data.encode()
        elif hasattr(data, "data_ptr") and hasattr(data, "nbytes"):
            return self.write_record(name, data.data_ptr(), size)
        self._writer.write_record(name, memoryview(data).cast("B")[:size])

    def get_all_written_records(self):
        return set(self._writer.names)

    def write_end_of_file(self):
        if not self._ended:
            self._ended = True
            self._writer.write_end_of_file()
            if self._owned:
                self._f.close()

    def serialization_id(self):
        return serialization_id(self._writer.names, self._writer.crcs)
