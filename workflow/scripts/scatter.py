#!/usr/bin/env python3
"""scatter.py - the workflow's two scatter steps (see workflow/Snakefile).

  scatter.py reads READS N OUT_PREFIX
      Split FASTQ/FASTA READS (plain or gzip) into N chunks OUT_PREFIX.I (of
      READS' format, uncompressed) of consecutive records, in input order, the first ones one
      record larger when N does not divide the count; concatenated they are
      READS again.  A chunk may be empty (fewer reads than chunks).

  scatter.py pairs READS_1 READS_2 N OUT_PREFIX
      Paired-end reads: the mates of READS_1 and READS_2 (the same count)
      into N chunks OUT_PREFIX.I of consecutive pairs, each pair as mate 1
      then mate 2 (interleaved: seedfilt --interleaved reads them); chunk 0
      holds at least the first 10000 pairs (all when there are fewer), the
      pairs extend estimates the insert size from, so that the merge of
      chunk 0 estimates it as a run over all the reads would; the other
      chunks share the rest as above.

  scatter.py ref REF.fa N OUT_PREFIX
      Split FASTA REF into N partitions OUT_PREFIX.I.fa: contiguous groups of
      whole sequences, in order, each partition's bases near total / N (a cut
      goes after the sequence that reaches the next multiple of total / N),
      every partition at least one sequence.  Writes OUT_PREFIX.u, the seed
      length seqidx would choose for the whole reference (floor(log4 total)
      - 2, in 4..12), so that every partition's index has the whole's.

  scatter.py ranges READS N
      Print the byte offsets that cut uncompressed FASTQ/FASTA READS into N
      chunks of whole records in input order, about equal in bytes: N + 1
      numbers, 0 first and the file's size last (a chunk may be empty).
      Exits 3 where READS cannot be cut so (gzip, neither format, no record
      start found near a cut): then the reads are copied (scatter.py reads).
      The workflow maps each chunk from its range (scatter.py cat) instead
      of copying the reads first.

  scatter.py cat FILE A B
      Write bytes A..B-1 of FILE to standard output.

  scatter.py chunks READS [READS_2] [CHUNK_READS]
      Print the number of chunks the workflow cuts READS into when its
      config gives no `chunks`: the reads (READS_2: pairs, two reads each)
      over CHUNK_READS (reads per chunk, default DEFAULT_CHUNK_READS), rounded
      up, at least 1.  The reads are counted from READS' size and the mean
      size of the records in its first MiB (gzip: the first MiB's
      compression ratio too): no read of the whole file, so an estimate
      (exact where the file is that small).

Every output is written to a temporary name and renamed when complete, so
a retried or interrupted job never leaves a partial file under a final name.

Where a FASTQ record starts: FASTQ here is the 4-line form (seedfilt reads
no other), so a line is a record's first exactly when it starts with '@' and
the line after the next starts with '+': a quality line may start with '@'
or '+', but two lines after it comes a sequence line (bases, never '+'),
and a sequence line never starts with '@'.  FASTA: a line starting with '>'.
"""
import errno
import gzip
import os
import sys
import zlib


def die(msg):
    sys.stderr.write('scatter.py: %s\n' % msg)
    sys.exit(1)


def opener(path):
    with open(path, 'rb') as f:
        magic = f.read(2)
    if magic == b'\x1f\x8b':
        return gzip.open(path, 'rb')
    return open(path, 'rb')


def records(path):
    """Yield the records of a FASTA or FASTQ file as lists of raw lines."""
    with opener(path) as f:
        first = f.readline()
        if not first:
            return
        if first.startswith(b'@'):
            line = first
            n = 0
            while line:
                if not line.startswith(b'@'):
                    die("'%s': record %d does not start with '@'" % (path, n + 1))
                rec = [line]
                for _ in range(3):
                    nxt = f.readline()
                    if not nxt:
                        die("'%s': record %d is truncated" % (path, n + 1))
                    rec.append(nxt)
                if not rec[2].startswith(b'+'):
                    die("'%s': record %d has no '+' line (multi-line FASTQ is not "
                        "split here)" % (path, n + 1))
                n += 1
                yield rec
                line = f.readline()
        elif first.startswith(b'>'):
            rec = [first]
            for line in f:
                if line.startswith(b'>'):
                    yield rec
                    rec = [line]
                else:
                    rec.append(line)
            yield rec
        else:
            die("'%s': neither FASTA nor FASTQ" % path)


# bytes read at a time by the FASTQ path (the tests make it small)
BLOCK = int(os.environ.get('SEEDPIPE_SCATTER_BLOCK', 1 << 24))


def is_fastq(path):
    with opener(path) as f:
        return f.read(1) == b'@'


def fastq_count(path):
    """The records of FASTQ file PATH (4 lines each: checked by fastq_blocks)."""
    lines = 0
    last = b'\n'
    with opener(path) as f:
        while True:
            buf = f.read(BLOCK)
            if not buf:
                break
            lines += buf.count(b'\n')
            last = buf[-1:]
    if last != b'\n':
        lines += 1
    return -(-lines // 4)


def fastq_blocks(path):
    """Yield the records of FASTQ file PATH a block at a time, as lists of
    their lines without the newlines (4 a record), each record checked as
    records() checks it; a last line with no newline is yielded as b'' plus
    the flag unterminated, (lines, unterminated)."""
    n = 0
    rest = b''
    with opener(path) as f:
        while True:
            buf = f.read(BLOCK)
            if not buf:
                break
            lines = (rest + buf).split(b'\n')
            m = (len(lines) - 1) // 4 * 4     # whole records among the full lines
            rest = b'\n'.join(lines[m:])
            del lines[m:]
            n = fastq_check(path, lines, n)
            yield lines, False
    if rest:
        lines = rest.split(b'\n')
        if len(lines) != 4:
            die("'%s': record %d is truncated" % (path, n + 1))
        n = fastq_check(path, lines, n)
        yield lines, True


def fastq_check(path, lines, n):
    """Check the records of LINES (records n + 1 on): n plus their count."""
    heads = lines[0::4]
    plus = lines[2::4]
    if not all(h[:1] == b'@' for h in heads):
        j = next(i for i, h in enumerate(heads) if h[:1] != b'@')
        die("'%s': record %d does not start with '@'" % (path, n + j + 1))
    if not all(p[:1] == b'+' for p in plus):
        j = next(i for i, p in enumerate(plus) if p[:1] != b'+')
        die("'%s': record %d has no '+' line (multi-line FASTQ is not "
            "split here)" % (path, n + j + 1))
    return n + len(heads)


def write_lines(out, lines, a, b, unterminated):
    """Write lines A..B of LINES, each with its newline (not the file's last
    line when UNTERMINATED)."""
    if a < b:
        out.write(b'\n'.join(lines[a:b]))
        if not (unterminated and b == len(lines)):
            out.write(b'\n')


def atomic(path):
    return open(path + '.tmp', 'wb')


def commit(files, paths):
    for f in files:
        f.close()
    for p in paths:
        os.replace(p + '.tmp', p)


def chunk_sizes(total, n, first=0):
    """Records per chunk: FIRST (at least) in chunk 0, the rest shared
    evenly, the first chunks one larger when N does not divide them."""
    if n == 1:
        return [total]
    if first == 0:
        base, extra = divmod(total, n)
        return [base + (1 if i < extra else 0) for i in range(n)]
    base, extra = divmod(total - first, n - 1)
    return [first] + [base + (1 if i < extra else 0) for i in range(n - 1)]


def scatter_reads(path, n, prefix):
    paths = ['%s.%d' % (prefix, i) for i in range(n)]
    fq = is_fastq(path)
    total = fastq_count(path) if fq else sum(1 for _ in records(path))
    sizes = chunk_sizes(total, n)
    outs = [atomic(p) for p in paths]
    i = k = 0
    if fq:
        # whole blocks of lines, cut where a chunk is full
        for lines, unterm in fastq_blocks(path):
            a = 0
            while a < len(lines):
                while k == sizes[i]:
                    i += 1
                    k = 0
                take = min(sizes[i] - k, (len(lines) - a) // 4)
                write_lines(outs[i], lines, a, a + 4 * take, unterm)
                a += 4 * take
                k += take
    else:
        for rec in records(path):
            while k == sizes[i]:
                i += 1
                k = 0
            outs[i].writelines(rec)
            k += 1
    commit(outs, paths)
    sys.stderr.write('scatter.py: %d reads into %d chunks of %s\n'
                     % (total, n, ', '.join(map(str, sizes))))


INS_PAIRS = 10000   # extend's EXT_INS_PAIRS


def fastq_records(path):
    """The records of FASTQ file PATH as lists of lines, each with a newline
    (the file's last one too), read by blocks."""
    for lines, _ in fastq_blocks(path):
        nl = [l + b'\n' for l in lines]
        for j in range(0, len(nl), 4):
            yield nl[j:j + 4]


def terminated(recs):
    """RECS (records as lists of lines), the last line given its newline."""
    for rec in recs:
        if not rec[-1].endswith(b'\n'):
            rec[-1] += b'\n'
        yield rec


def scatter_pairs(path1, path2, n, prefix):
    fq1, fq2 = is_fastq(path1), is_fastq(path2)
    total = fastq_count(path1) if fq1 else sum(1 for _ in records(path1))
    total2 = fastq_count(path2) if fq2 else sum(1 for _ in records(path2))
    if total != total2:
        die("'%s' holds %d reads but '%s' %d: not the two files of one set of pairs"
            % (path1, total, path2, total2))
    sizes = chunk_sizes(total, n, max(-(-total // n), min(INS_PAIRS, total)))
    paths = ['%s.%d' % (prefix, i) for i in range(n)]
    outs = [atomic(p) for p in paths]
    i = k = 0
    # interleaved, so every mate ends with a newline
    for r1, r2 in zip(fastq_records(path1) if fq1 else terminated(records(path1)),
                      fastq_records(path2) if fq2 else terminated(records(path2))):
        while k == sizes[i]:
            i += 1
            k = 0
        outs[i].writelines(r1)
        outs[i].writelines(r2)
        k += 1
    commit(outs, paths)
    sys.stderr.write('scatter.py: %d pairs into %d chunks of %s\n'
                     % (total, n, ', '.join(map(str, sizes))))


def seq_len(rec):
    return sum(len(l.strip()) for l in rec[1:])


def default_u(total):
    u = 0
    while total >= 4:
        total >>= 2
        u += 1
    u -= 2
    return 4 if u < 4 else 12 if u > 12 else u


def scatter_ref(path, n, prefix):
    lens = [seq_len(r) for r in records(path)]
    ns = len(lens)
    if ns < n:
        die("'%s' holds %d sequence%s: it cannot make %d partitions of whole "
            "sequences" % (path, ns, '' if ns == 1 else 's', n))
    total = sum(lens)
    # part[i]: partition of sequence i
    part, cum, p = [], 0, 0
    for i, l in enumerate(lens):
        # a new partition when the previous one reached its share, and while
        # the sequences left must still fill the partitions left
        if p < n - 1 and part and (cum * n >= (p + 1) * total or ns - i == n - 1 - p):
            p += 1
        part.append(p)
        cum += l
    paths = ['%s.%d.fa' % (prefix, i) for i in range(n)]
    outs = [atomic(q) for q in paths]
    for i, rec in enumerate(records(path)):
        outs[part[i]].writelines(rec)
    with atomic(prefix + '.u') as f:
        f.write(b'%d\n' % default_u(total))
    commit(outs, paths + [prefix + '.u'])
    sizes = [sum(l for l, q in zip(lens, part) if q == k) for k in range(n)]
    sys.stderr.write('scatter.py: %d sequences, %d bases into %d partitions of %s bases\n'
                     % (ns, total, n, ', '.join(map(str, sizes))))


# how far past a cut ranges() looks for a record start before giving up
RANGE_LOOK = int(os.environ.get('SEEDPIPE_RANGE_LOOK', 1 << 24))


def record_start(f, t, size, fq):
    """The offset of the first record of open file F (SIZE bytes) that
    starts at or after offset T; SIZE when none does; None when none starts
    in RANGE_LOOK bytes after T (or before a line longer than that ends)."""
    if t <= 0:
        return 0
    if t >= size:
        return size
    want = 1 << 16
    while True:
        f.seek(t - 1)
        buf = f.read(want)
        end = t - 1 + len(buf) >= size     # buf reaches the end of the file
        lines = buf.split(b'\n')
        # lines[0] ends just before t or later: the line starts after it
        pos = t - 1 + len(lines[0]) + 1
        for i in range(1, len(lines)):
            # lines[i] starts at pos; whole when a newline follows it or at the end
            have = len(lines) - 1 - i + (1 if end else 0)   # whole lines from i
            if fq:
                if have < 3 and not end:
                    break
                if lines[i][:1] == b'@' and i + 2 < len(lines) and lines[i + 2][:1] == b'+':
                    return pos
            elif lines[i][:1] == b'>':
                if have < 1 and not end:
                    break
                return pos
            pos += len(lines[i]) + 1
        else:
            if end:
                return size
        if want > RANGE_LOOK or end:
            return None
        want *= 4


def read_ranges(path, n):
    """N + 1 byte offsets cutting uncompressed FASTQ/FASTA PATH into N chunks
    of whole records (see ranges), or None where it cannot be cut so."""
    size = os.path.getsize(path)
    with open(path, 'rb') as f:
        head = f.read(2)
        if head == b'\x1f\x8b' or head[:1] not in (b'@', b'>'):
            return None
        fq = head[:1] == b'@'
        cuts = [0]
        for i in range(1, n):
            c = record_start(f, max(size * i // n, cuts[-1]), size, fq)
            if c is None:
                return None
            cuts.append(c)
    cuts.append(size)
    return cuts


def cat_range(path, a, b):
    out = sys.stdout.buffer
    out.flush()
    fd = out.fileno()
    with open(path, 'rb') as f:
        if os.fstat(f.fileno()).st_size < b:
            die("'%s' is shorter than %d bytes" % (path, b))
        while a < b:
            try:
                k = os.sendfile(fd, f.fileno(), a, min(b - a, 1 << 24))
            except OSError as e:
                if e.errno not in (errno.EINVAL, errno.ENOSYS):
                    raise
                f.seek(a)    # no sendfile to this output: read and write
                buf = f.read(min(b - a, 1 << 20))
                out.write(buf)
                out.flush()
                k = len(buf)
            if k == 0:
                die("'%s' ended before byte %d" % (path, b))
            a += k


# reads per chunk when the workflow's config gives no chunk count (see the
# Snakefile: a chunk's job should take at least a minute of one core)
DEFAULT_CHUNK_READS = 2000000
# bytes of the reads file looked at by estimate_reads (the tests make it small)
ESTIMATE_LOOK = int(os.environ.get('SEEDPIPE_ESTIMATE_LOOK', 1 << 20))


def estimate_reads(path):
    """About how many records FASTQ/FASTA PATH (plain or gzip) holds: its
    (uncompressed) size over the mean size of the whole records in its first
    ESTIMATE_LOOK bytes; the count itself where those are the whole file."""
    size = os.path.getsize(path)
    with open(path, 'rb') as f:
        raw = f.read(ESTIMATE_LOOK)
    if raw[:2] == b'\x1f\x8b':
        head, rest, whole = b'', raw, False
        while rest:     # member after member (bgzip writes many)
            d = zlib.decompressobj(wbits=31)
            head += d.decompress(rest)
            rest = d.unused_data
            whole = d.eof and len(raw) == size
        total = size * len(head) / max(len(raw), 1)     # the head's ratio
    else:
        head, whole, total = raw, len(raw) == size, size
    if not head:
        return 0
    lines = head.split(b'\n')
    if not whole:
        lines.pop()     # a line cut at the look's end
    elif lines[-1] == b'':
        lines.pop()     # after the final newline
    if head[:1] == b'@':
        n = len(lines) // 4 if not whole else -(-len(lines) // 4)
        used = sum(len(l) + 1 for l in lines[:4 * n])
    else:
        starts = [i for i, l in enumerate(lines) if l[:1] == b'>']
        n = len(starts) if whole else len(starts) - 1   # the last record may go on
        used = sum(len(l) + 1 for l in lines[:starts[n]]) if n > 0 and not whole else len(head)
    if whole or n <= 0:
        return max(n, 1 if head.strip() else 0)
    return max(1, round(total * n / used))


def default_chunks(path, path2=None, chunk_reads=DEFAULT_CHUNK_READS):
    """The workflow's chunk count for READS (and mate file PATH2) where its
    config gives none: estimated reads over CHUNK_READS, rounded up, at least 1."""
    reads = estimate_reads(path) * (2 if path2 else 1)
    return max(1, -(-reads // chunk_reads))


def count_arg(s):
    """The chunk count N of the command line: a positive number, else a usage error."""
    try:
        n = int(s)
    except ValueError:
        n = 0
    if n < 1:
        die("N must be a positive number, not '%s'" % s)
    return n


def main(argv):
    if argv[1:2] == ['ranges'] and len(argv) == 4:
        cuts = read_ranges(argv[2], count_arg(argv[3]))
        if cuts is None:
            sys.exit(3)
        print(' '.join(map(str, cuts)))
        return
    if argv[1:2] == ['chunks'] and 3 <= len(argv) <= 5:
        args = argv[2:]
        per = DEFAULT_CHUNK_READS
        if len(args) > 1 and args[-1].isdigit():
            per = count_arg(args.pop())
        print(default_chunks(args[0], args[1] if len(args) > 1 else None, per))
        return
    if argv[1:2] == ['cat'] and len(argv) == 5:
        try:
            a, b = int(argv[3]), int(argv[4])
        except ValueError:
            a = b = -1
        if a < 0 or b < a:
            die("A and B must be offsets, A <= B, not '%s' '%s'" % (argv[3], argv[4]))
        try:
            cat_range(argv[2], a, b)
        except BrokenPipeError:
            # the reader ended first (its own error says why)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        return
    if argv[1:2] == ['pairs'] and len(argv) == 6:
        pair2 = argv[3]
        argv = argv[:3] + argv[4:]
    elif len(argv) != 5 or argv[1] not in ('reads', 'ref'):
        die('usage: scatter.py reads READS N PREFIX | pairs READS_1 READS_2 N PREFIX | '
            'ref REF.fa N PREFIX | ranges READS N | cat FILE A B | '
            'chunks READS [READS_2] [CHUNK_READS]')
    n = count_arg(argv[3])
    if argv[1] == 'pairs':
        scatter_pairs(argv[2], pair2, n, argv[4])
    elif argv[1] == 'reads':
        scatter_reads(argv[2], n, argv[4])
    else:
        scatter_ref(argv[2], n, argv[4])


if __name__ == '__main__':
    main(sys.argv)
