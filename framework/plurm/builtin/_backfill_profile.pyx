# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The backfill plan's profile, compiled: :class:`plurm.builtin.backfill_profile.PyProfile`
with each view's segments in C arrays.

The base profile (the segments of the whole node table) is made in C words: a pass's
plan comes from the jobs holding nodes (:meth:`Profile.of_held`), whose bitmaps are read
into words digit by digit (only an int's nonzero digits), so no int is made per end; a
view is cut from the base in C. A view keeps its segment starts as doubles and each
segment's free nodes as 64-bit words (bit i of the view is the view's i-th node from its
lowest usable one, as the reference's shifted ints), so searching openings, splitting
segments and taking reservations out run in C. Ints cross the border for the jobs'
bitmaps, the nodes held and free now, when a view is built, when a reservation reaches a
view, and for each opening given out. Every method gives what the reference gives, segment
for segment (property tests run the two side by side).
"""

from libc.math cimport ceil
from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free, malloc, qsort, realloc
from libc.string cimport memcpy, memmove, memset

import itertools
import math

cdef extern from *:
    """
    /* An int from n bytes, little end first: CPython's own conversion (int.from_bytes
       calls it), without a bytes object between. */
    static PyObject* plurm_long_from_bytes(const unsigned char* bytes, size_t n) {
        return _PyLong_FromByteArray(bytes, n, 1, 0);
    }
    /* A non-negative int's bits ORed into out[0..width) (words that must be zero where it
       has bits), with the first and last word it touched in *lo and *hi (*lo > *hi: none).
       CPython up to 3.11 keeps an int as digits of PyLong_SHIFT bits: only its nonzero
       digits are read, so a job's nodes high in a wide table cost their own digits. Later
       versions go through _PyLong_AsByteArray (every word written). */
    static int plurm_long_or_words(PyObject* v, uint64_t* out, Py_ssize_t width,
                                   Py_ssize_t* lo, Py_ssize_t* hi) {
    #if PY_VERSION_HEX < 0x030C0000
        PyLongObject* number = (PyLongObject*)v;
        Py_ssize_t size = Py_SIZE(number), index;
        *lo = width;
        *hi = -1;
        if (size < 0) {
            PyErr_SetString(PyExc_ValueError, "a negative bitmap");
            return -1;
        }
        for (index = 0; index < size; index++) {
            uint64_t digit = number->ob_digit[index];
            Py_ssize_t bit, word;
            int shift;
            if (!digit) continue;
            bit = index * PyLong_SHIFT;
            word = bit >> 6;
            shift = (int)(bit & 63);
            if (word >= width) goto wide;
            out[word] |= digit << shift;
            if (word < *lo) *lo = word;
            if (word > *hi) *hi = word;
            if (shift + PyLong_SHIFT > 64 && (digit >> (64 - shift))) {
                if (word + 1 >= width) goto wide;
                out[word + 1] |= digit >> (64 - shift);
                *hi = word + 1;
            }
        }
        return 0;
    wide:
        PyErr_SetString(PyExc_ValueError, "a bitmap wider than the node table");
        return -1;
    #else
        if (_PyLong_AsByteArray((PyLongObject*)v, (unsigned char*)out, width * 8, 1, 0
        #if PY_VERSION_HEX >= 0x030D0000
                                , 1
        #endif
                                ) < 0)
            return -1;
        *lo = 0;
        *hi = width - 1;
        return 0;
    #endif
    }
    static inline int plurm_popcount64(unsigned long long x) {
    #if defined(__GNUC__) || defined(__clang__)
        return __builtin_popcountll(x);
    #else
        int n = 0;
        while (x) { x &= x - 1; n++; }
        return n;
    #endif
    }
    """
    int plurm_popcount64(unsigned long long x) nogil
    int plurm_long_or_words(object v, uint64_t* out, Py_ssize_t width, Py_ssize_t* lo,
                            Py_ssize_t* hi) except -1
    object plurm_long_from_bytes(const unsigned char* data, size_t n)

cdef double _INF = math.inf


cdef inline Py_ssize_t _count(const uint64_t* words, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t total = 0, i
    for i in range(n):
        total += plurm_popcount64(words[i])
    return total


cdef inline void _to_words(object value, uint64_t* out, Py_ssize_t n) except *:
    """A non-negative int of at most ``n`` words, into ``out`` (a little-endian machine's
    words: bytes little end first)."""
    cdef Py_ssize_t low, high
    memset(out, 0, n * sizeof(uint64_t))
    plurm_long_or_words(value, out, n, &low, &high)


cdef inline object _from_words(const uint64_t* words, Py_ssize_t n):
    return plurm_long_from_bytes(<const unsigned char*> words, n * 8)


cdef inline bint _same_words(const uint64_t* a, const uint64_t* b, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        if a[i] != b[i]:
            return False
    return True


cdef class _View:
    """One view: ``count`` segments, the i-th starting at ``starts[i]`` with free nodes
    ``frees[i * width : (i + 1) * width]`` (shifted down by ``low``)."""

    cdef Py_ssize_t width, count, capacity, applied
    cdef int low
    cdef double* starts
    cdef uint64_t* frees
    cdef uint64_t* scratch  # one segment's worth, for the searches

    def __cinit__(self, Py_ssize_t width, int low, Py_ssize_t capacity):
        self.width = width if width > 0 else 1
        self.low = low
        self.count = 0
        self.applied = 0
        self.capacity = capacity if capacity > 4 else 4
        self.starts = <double*> malloc(self.capacity * sizeof(double))
        self.frees = <uint64_t*> malloc(self.capacity * self.width * sizeof(uint64_t))
        self.scratch = <uint64_t*> malloc(self.width * sizeof(uint64_t))
        if self.starts is NULL or self.frees is NULL or self.scratch is NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.starts)
        free(self.frees)
        free(self.scratch)

    cdef void _grow(self, Py_ssize_t need) except *:
        cdef Py_ssize_t capacity = self.capacity
        if need <= capacity:
            return
        while capacity < need:
            capacity *= 2
        cdef double* starts = <double*> realloc(self.starts, capacity * sizeof(double))
        if starts is NULL:
            raise MemoryError()
        self.starts = starts
        cdef uint64_t* frees = <uint64_t*> realloc(
            self.frees, capacity * self.width * sizeof(uint64_t)
        )
        if frees is NULL:
            raise MemoryError()
        self.frees = frees
        self.capacity = capacity

    cdef void _append_words(self, double start, const uint64_t* words) except *:
        """A segment at the end, a copy of ``words``."""
        self._grow(self.count + 1)
        self.starts[self.count] = start
        memcpy(self.frees + self.count * self.width, words, self.width * sizeof(uint64_t))
        self.count += 1

    cdef Py_ssize_t _split(self, double when) except -1:
        """The index of the segment that starts at ``when``, splitting one if needed (the
        reference's ``_split``)."""
        cdef Py_ssize_t low = 0, high = self.count, middle, index, width = self.width
        while low < high:  # bisect_right
            middle = (low + high) // 2
            if when < self.starts[middle]:
                high = middle
            else:
                low = middle + 1
        index = low - 1
        # (index -1 reads the last segment, as the reference's starts[-1] does)
        if self.starts[index if index >= 0 else self.count - 1] != when:
            index += 1
            self._grow(self.count + 1)
            memmove(
                self.starts + index + 1, self.starts + index,
                (self.count - index) * sizeof(double),
            )
            memmove(
                self.frees + (index + 1) * width, self.frees + index * width,
                (self.count - index) * width * sizeof(uint64_t),
            )
            self.count += 1
            self.starts[index] = when
            # a copy of the segment before it (the reference's frees[index - 1])
            memcpy(
                self.frees + index * width,
                self.frees + ((index - 1) if index >= 1 else self.count - 1) * width,
                width * sizeof(uint64_t),
            )
        return index

    cdef void _take(self, double start, double end, object nodes) except *:
        """Take ``nodes`` (shifted) from ``start`` to ``end`` (the reference's ``_take``)."""
        cdef Py_ssize_t width = self.width, first, last, index, word
        _to_words(nodes, self.scratch, width)
        first = self._split(start)
        last = self._split(end) if end != _INF else self.count
        cdef uint64_t* row
        for index in range(first, last):
            row = self.frees + index * width
            for word in range(width):
                row[word] &= ~self.scratch[word]

    cdef void _merge(self) noexcept nogil:
        """Merge each segment into the one before when their free nodes are the same."""
        cdef Py_ssize_t width = self.width, kept = 0, index
        for index in range(self.count):
            if kept and _same_words(
                self.frees + (kept - 1) * width, self.frees + index * width, width
            ):
                continue
            if kept != index:
                self.starts[kept] = self.starts[index]
                memcpy(self.frees + kept * width, self.frees + index * width,
                       width * sizeof(uint64_t))
            kept += 1
        self.count = kept

    def segments(self):
        """The view as the reference keeps it: (starts, frees, low)."""
        starts = [self.starts[index] for index in range(self.count)]
        frees = [
            _from_words(self.frees + index * self.width, self.width)
            for index in range(self.count)
        ]
        return starts, frees, self.low


cdef struct _Held:
    double end  # a job's end, rounded
    Py_ssize_t index  # its place in the order given


cdef int _later_first(const void* a, const void* b) noexcept nogil:
    cdef double x = (<const _Held*> a).end, y = (<const _Held*> b).end
    return -1 if x > y else (1 if x < y else 0)


cdef class Profile:
    """See :class:`plurm.builtin.backfill_profile.PyProfile`: the same methods, the same
    answers. The base segments' nodes are C words, each segment's only from its first to
    its last word with a node (a job's nodes are a few words of a wide table), so that
    each view is cut from them in C."""

    cdef public object everything
    cdef double* _starts  # each base segment's start (as many as segments)
    cdef list _freed
    cdef dict _views
    cdef list _reservations
    cdef object _taken_now
    # The base segments: segment i's words are _store[offset : offset + hi - lo + 1] for
    # the table's words lo to hi, with (offset, lo, hi) at _rows[3 * i] (lo > hi: no node).
    cdef uint64_t* _store
    cdef Py_ssize_t _stored, _store_capacity
    cdef Py_ssize_t* _rows
    cdef Py_ssize_t _row_count, _row_capacity
    cdef bint _read
    # what free_now gives before any reservation: the nodes free in the segments before
    # the last that starts now, and in that one (see free_now)
    cdef object _now_before
    cdef object _now_last

    def __cinit__(self, *args, **kwargs):
        self._store = NULL
        self._rows = NULL
        self._starts = NULL
        self._stored = self._store_capacity = 0
        self._row_count = self._row_capacity = 0
        self._read = False

    def __dealloc__(self):
        free(self._store)
        free(self._rows)
        free(self._starts)

    def __init__(self, double now, everything, dict ends, held=None):
        self.everything = everything
        cdef list starts = [now, *sorted(ends)]
        cdef Py_ssize_t index
        self._starts = <double*> malloc(len(starts) * sizeof(double))
        if self._starts is NULL:
            raise MemoryError()
        for index in range(len(starts)):
            self._starts[index] = starts[index]
        if held is None:
            held = 0
            for nodes in ends.values():
                held |= nodes
        self._freed = [everything & ~held]
        self._freed.extend(map(ends.__getitem__, itertools.islice(starts, 1, None)))
        self._views = {}
        self._reservations = []
        self._taken_now = 0
        self._now_parts()

    @property
    def starts(self):
        """Each base segment's start, as the reference's ``starts``."""
        cdef Py_ssize_t index
        count = len(self._freed) if self._freed is not None else self._row_count
        return [self._starts[index] for index in range(count)]

    cdef void _now_parts(self) except *:
        cdef list freed = self._freed
        cdef double now = self._starts[0]
        before = 0
        last = freed[0]
        cdef Py_ssize_t index
        for index in range(1, len(freed)):
            if self._starts[index] != now:
                break
            before = last
            last |= freed[index]
        self._now_before = before
        self._now_last = last

    cdef void _reserve_rows(self, Py_ssize_t rows) except *:
        """Room for ``rows`` segments in all."""
        if rows <= self._row_capacity:
            return
        cdef Py_ssize_t* grown = <Py_ssize_t*> realloc(self._rows, 3 * rows * sizeof(Py_ssize_t))
        if grown is NULL:
            raise MemoryError()
        self._rows = grown
        self._row_capacity = rows

    cdef void _add_row(self, const uint64_t* words, Py_ssize_t lo, Py_ssize_t hi) except *:
        """A segment at the end: the nodes of ``words`` (table-wide) from word ``lo`` to
        ``hi``, the others having none."""
        self._reserve_rows(self._row_count + 1)
        self._put_row(self._row_count, words, lo, hi)
        self._row_count += 1

    cdef void _put_row(
        self, Py_ssize_t index, const uint64_t* words, Py_ssize_t lo, Py_ssize_t hi
    ) except *:
        """Segment ``index`` (room made for it) gets the nodes of ``words`` from word ``lo``
        to ``hi``; its words go at the store's end."""
        while lo <= hi and not words[lo]:
            lo += 1
        while hi >= lo and not words[hi]:
            hi -= 1
        cdef Py_ssize_t count = hi - lo + 1 if hi >= lo else 0, capacity
        cdef uint64_t* grown
        if self._stored + count > self._store_capacity:
            capacity = 2 * self._store_capacity + count + 64
            grown = <uint64_t*> realloc(self._store, capacity * sizeof(uint64_t))
            if grown is NULL:
                raise MemoryError()
            self._store = grown
            self._store_capacity = capacity
        if count:
            memcpy(self._store + self._stored, words + lo, count * sizeof(uint64_t))
        cdef Py_ssize_t* row = self._rows + 3 * index
        row[0] = self._stored
        row[1] = lo if count else 1
        row[2] = hi if count else 0
        self._stored += count

    cdef inline void _extract(
        self, Py_ssize_t index, Py_ssize_t offset, uint64_t* out, Py_ssize_t width
    ) noexcept nogil:
        """Bits ``offset`` to ``offset + 64 * width`` of segment ``index`` into ``out``: the
        segment's nodes shifted down to a view's lowest node."""
        cdef const Py_ssize_t* row = self._rows + 3 * index
        cdef const uint64_t* words = self._store + row[0]
        cdef Py_ssize_t lo = row[1], hi = row[2], first = offset // 64, word, at
        cdef int shift = offset % 64
        cdef uint64_t low, high
        for word in range(width):
            at = first + word
            low = words[at - lo] if lo <= at <= hi else 0
            if shift:
                high = words[at + 1 - lo] if lo <= at + 1 <= hi else 0
                out[word] = (low >> shift) | (high << (64 - shift))
            else:
                out[word] = low

    @staticmethod
    def of_held(double now, resolution, held, Py_ssize_t node_count):
        """See the reference's ``of_held``: the same plan, the base's segments made in C
        words from the jobs' bitmaps (no int per end)."""
        cdef double step = resolution, when_at, end, current = 0
        cdef Py_ssize_t width = (node_count + 63) // 64 if node_count > 0 else 1
        cdef Py_ssize_t count = 0, capacity = 64, index, word, low, high, made = 0
        cdef Py_ssize_t row_low = 0, row_high = -1, before
        cdef list masks = []
        cdef _Held* order = <_Held*> malloc(capacity * sizeof(_Held))
        cdef _Held* grown
        cdef uint64_t* words = NULL
        cdef uint64_t* claimed
        cdef uint64_t* infinite
        cdef uint64_t* nodes
        cdef uint64_t* row
        cdef uint64_t taken
        cdef double* ends = NULL
        cdef bint open_row = False, some = False  # (some: the row's jobs hold nodes)
        cdef Py_ssize_t* rows
        cdef Profile profile = Profile.__new__(Profile)
        if order is NULL:
            raise MemoryError()
        try:
            for _, when, mask in held:
                if count == capacity:
                    capacity *= 2
                    grown = <_Held*> realloc(order, capacity * sizeof(_Held))
                    if grown is NULL:
                        raise MemoryError()
                    order = grown
                if when is None:
                    end = _INF
                else:
                    when_at = when
                    end = now + ceil((when_at - now) / step) * step if when_at > now else now
                order[count].end = end
                order[count].index = count
                masks.append(mask)
                count += 1
            qsort(order, count, sizeof(_Held), _later_first)
            # the row being filled, the nodes claimed so far, those of jobs without an end
            # and one job's nodes; each segment's end, latest first
            words = <uint64_t*> calloc(4 * width, sizeof(uint64_t))
            ends = <double*> malloc((count + 1) * sizeof(double))
            if words is NULL or ends is NULL:
                raise MemoryError()
            row, claimed, infinite, nodes = words, words + width, words + 2 * width, words + 3 * width
            profile._reserve_rows(count + 1)
            profile._row_count = 1  # (segment 0, the nodes free from now on: below)
            for index in range(count + 1):
                end = order[index].end if index < count else 0
                if index == count or not open_row or end != current:
                    # the row of the end before is done: it stays unless later ends took all
                    # of its jobs' nodes (an end whose jobs hold no node stays, as the
                    # reference keeps it)
                    if open_row and current != _INF:
                        before = profile._row_count
                        if row_low <= row_high:
                            profile._add_row(row, row_low, row_high)
                            memset(row + row_low, 0, (row_high - row_low + 1) * sizeof(uint64_t))
                            rows = profile._rows + 3 * (profile._row_count - 1)
                            if some and rows[1] > rows[2]:
                                profile._row_count -= 1  # (it stored no word)
                        elif not some:
                            profile._add_row(row, 1, 0)
                        if profile._row_count > before:
                            ends[made] = current
                            made += 1
                    if index == count:
                        break
                    current = end
                    open_row = True
                    some = False
                    row_low, row_high = width, -1
                plurm_long_or_words(masks[order[index].index], nodes, width, &low, &high)
                if low > high:
                    continue
                some = True
                if end == _INF:
                    for word in range(low, high + 1):
                        infinite[word] |= nodes[word]
                        claimed[word] |= nodes[word]
                        nodes[word] = 0
                    continue
                for word in range(low, high + 1):
                    taken = nodes[word] & ~claimed[word]
                    nodes[word] = 0
                    row[word] |= taken
                    claimed[word] |= taken
                if low < row_low:
                    row_low = low
                if high > row_high:
                    row_high = high
            # the segments after the first were made latest first: earliest first, then
            rows = profile._rows
            for index in range(made // 2):
                for word in range(3):
                    rows[3 * (1 + index) + word], rows[3 * (made - index) + word] = (
                        rows[3 * (made - index) + word], rows[3 * (1 + index) + word]
                    )
            profile._starts = <double*> malloc((made + 1) * sizeof(double))
            if profile._starts is NULL:
                raise MemoryError()
            profile._starts[0] = now
            for index in range(made):
                profile._starts[made - index] = ends[index]
            # every node of the table but those held for ever; the first segment's: less
            # those held at all
            for word in range(width):
                row[word] = ~infinite[word]
            if node_count % 64:
                row[width - 1] &= ((<uint64_t> 1) << (node_count % 64)) - 1
            if node_count <= 0:
                row[0] = 0
            profile.everything = _from_words(row, width)
            for word in range(width):
                row[word] &= ~claimed[word]
            first = _from_words(row, width)
            profile._put_row(0, row, 0, width - 1)
            held_nodes = _from_words(claimed, width)
            if made and ends[made - 1] == now:
                profile._now_before = first
                profile._now_last = first | profile._segment(1)
            else:
                profile._now_before = 0
                profile._now_last = first
        finally:
            free(order)
            free(words)
            free(ends)
        profile._read = True
        profile._freed = None
        profile._views = {}
        profile._reservations = []
        profile._taken_now = 0
        return profile, held_nodes

    cdef object _segment(self, Py_ssize_t index):
        """Segment ``index``'s nodes as an int."""
        cdef const Py_ssize_t* row = self._rows + 3 * index
        if row[1] > row[2]:
            return 0
        return _from_words(self._store + row[0], row[2] - row[1] + 1) << (64 * row[1])

    cdef void _read_base(self) except *:
        """The base segments' freed nodes (ints) into C words."""
        cdef list freed = self._freed
        cdef Py_ssize_t width = 1, low, high, bits
        for nodes in freed:
            bits = nodes.bit_length()
            if (bits + 63) // 64 > width:
                width = (bits + 63) // 64
        cdef uint64_t* words = <uint64_t*> calloc(width, sizeof(uint64_t))
        if words is NULL:
            raise MemoryError()
        try:
            self._reserve_rows(len(freed))
            for nodes in freed:
                plurm_long_or_words(nodes, words, width, &low, &high)
                self._add_row(words, low, high)
                if low <= high:
                    memset(words + low, 0, (high - low + 1) * sizeof(uint64_t))
        finally:
            free(words)
        self._read = True

    def free_now(self):
        return self._now_before | (self._now_last & ~self._taken_now)

    cdef _View _view(self, usable):
        """The view of ``usable``, built at the first call and brought up to date with the
        reservations made since (the reference's ``view``)."""
        cdef _View view = self._views.get(usable)
        cdef list reservations = self._reservations
        cdef Py_ssize_t index
        if view is None:
            view = self._build(usable)
            view.applied = len(reservations)
            self._views[usable] = view
            return view
        if view.applied < len(reservations):
            low = view.low
            for index in range(view.applied, len(reservations)):
                start, end, nodes = reservations[index]
                if nodes & usable:
                    view._take(start, end, (nodes & usable) >> low)
            view.applied = len(reservations)
        return view

    cdef _View _build(self, usable):
        cdef int low = (usable & -usable).bit_length() - 1 if usable else 0
        cdef Py_ssize_t width = ((usable.bit_length() - low) + 63) // 64
        cdef Py_ssize_t index, word, count
        cdef bint every = usable == self.everything
        taken = [
            (start, end, (nodes & usable) >> low)
            for start, end, nodes in self._reservations
            if nodes & usable
        ]
        # the view's segments: those that free a usable node (each one, when reservations
        # are replayed on them, merged after), their frees accumulated
        cdef bint all_segments = bool(taken) or every
        if not self._read:
            self._read_base()
        count = self._row_count
        cdef _View view = _View(width, low, count + 2 * len(taken) if all_segments else 8)
        width = view.width
        # the words of the table the view's nodes are in
        cdef Py_ssize_t first_word = low // 64
        cdef Py_ssize_t last_word = (usable.bit_length() - 1) // 64 if usable else 0
        cdef uint64_t* mine = <uint64_t*> malloc(2 * width * sizeof(uint64_t))
        if mine is NULL:
            raise MemoryError()
        cdef uint64_t* part = mine + width  # one segment's usable nodes, shifted
        cdef bint touches
        cdef const Py_ssize_t* row
        try:
            _to_words(usable >> low, mine, width)
            memset(view.scratch, 0, width * sizeof(uint64_t))  # the accumulated frees
            for index in range(count):
                row = self._rows + 3 * index
                if index and not all_segments and (row[2] < first_word or row[1] > last_word):
                    continue  # frees no node in the view's words
                self._extract(index, low, part, width)
                touches = False
                for word in range(width):
                    part[word] &= mine[word]
                    if part[word]:
                        touches = True
                if index and not all_segments and not touches:
                    continue
                for word in range(width):
                    view.scratch[word] |= part[word]
                view._append_words(self._starts[index], view.scratch)
        finally:
            free(mine)
        for start, end, nodes in taken:
            view._take(start, end, nodes)
        if taken and not every:
            view._merge()
        return view

    def view(self, usable):
        """(starts, frees, low), as the reference's ``view`` gives them (for tests: the
        pass reads views only through :meth:`openings`)."""
        return self._view(usable).segments()

    def build_view(self, usable):
        if usable not in self._views:
            self._view(usable)

    def reserve(self, double start, double end, nodes):
        self._reservations.append((start, end, nodes))
        if start == self._starts[0] and end > start:
            self._taken_now |= nodes

    def openings(self, usable, Py_ssize_t least, double duration, double horizon):
        """Each segment start before ``horizon``, earliest first, from which at least
        ``least`` usable nodes stay free for ``duration``, with those nodes (as the
        reference's ``openings``)."""
        cdef _View view = self._view(usable)
        cdef Py_ssize_t first = 0, index, width = view.width, word
        cdef double start, end
        cdef uint64_t* free_words
        cdef uint64_t* row
        cdef bint found
        while first < view.count:  # (read again after each yield: the caller may reserve)
            start = view.starts[first]
            if start >= horizon:
                return
            free_words = view.scratch
            memcpy(free_words, view.frees + first * width, width * sizeof(uint64_t))
            first += 1
            if _count(free_words, width) < least:
                continue
            end = start + duration
            index = first
            found = True
            while index < view.count and view.starts[index] < end:
                row = view.frees + index * width
                for word in range(width):
                    free_words[word] &= row[word]
                if _count(free_words, width) < least:
                    if _count(row, width) < least:
                        # that segment is too full by itself, and every start up to it has
                        # it in its window too: go on after it
                        first = index + 1
                    found = False
                    break
                index += 1
            if found:
                yield start, _from_words(free_words, width) << view.low
