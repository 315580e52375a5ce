# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The backfill plan's profile, compiled: :class:`plurm.builtin.backfill_profile.PyProfile`
with each view's segments in C arrays.

The base profile (the segments of the whole node table) stays in Python ints, as the
reference keeps it: a view is cut from it with one AND per segment. A view keeps its segment
starts as doubles and each segment's free nodes as 64-bit words (bit i of the view is the
view's i-th node from its lowest usable one, as the reference's shifted ints), so searching
openings, splitting segments and taking reservations out run in C. Ints cross the border
only when a view is built, when a reservation reaches a view, and for each opening given
out. Every method gives what the reference gives, segment for segment (a property test runs
the two side by side).
"""

from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memmove, memset

import itertools
import math

cdef extern from *:
    """
    /* An int's bytes, little end first, into a buffer of n bytes (it must fit), and back:
       CPython's own conversions (int.to_bytes and int.from_bytes call them), without a
       bytes object between. */
    static int plurm_long_to_bytes(PyObject* v, unsigned char* out, size_t n) {
    #if PY_VERSION_HEX >= 0x030D0000
        return _PyLong_AsByteArray((PyLongObject*)v, out, n, 1, 0, 1);
    #else
        return _PyLong_AsByteArray((PyLongObject*)v, out, n, 1, 0);
    #endif
    }
    static PyObject* plurm_long_from_bytes(const unsigned char* bytes, size_t n) {
        return _PyLong_FromByteArray(bytes, n, 1, 0);
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
    int plurm_long_to_bytes(object v, unsigned char* out, size_t n) except -1
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
    plurm_long_to_bytes(value, <unsigned char*> out, n * 8)


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


cdef inline void _extract(
    const uint64_t* table, Py_ssize_t table_width, Py_ssize_t offset, uint64_t* out,
    Py_ssize_t width
) noexcept nogil:
    """Bits ``offset`` to ``offset + 64 * width`` of ``table`` (zeros past its end) into
    ``out``: a table-wide bitmap shifted down to a view's lowest node."""
    cdef Py_ssize_t first = offset // 64, word, at
    cdef int shift = offset % 64
    cdef uint64_t low, high
    for word in range(width):
        at = first + word
        low = table[at] if at < table_width else 0
        if shift:
            high = table[at + 1] if at + 1 < table_width else 0
            out[word] = (low >> shift) | (high << (64 - shift))
        else:
            out[word] = low


cdef class Profile:
    """See :class:`plurm.builtin.backfill_profile.PyProfile`: the same methods, the same
    answers. The base segments' nodes are read into C words (table-wide) when the first
    view is built, so that each view is cut from them in C."""

    cdef public object everything
    cdef public list starts
    cdef list _freed
    cdef dict _views
    cdef list _reservations
    cdef object _taken_now
    cdef uint64_t* _base  # the base segments' freed nodes, _base_width words each
    cdef Py_ssize_t _base_width
    cdef Py_ssize_t* _spans  # each base segment's first and last word with a node

    def __cinit__(self, *args, **kwargs):
        self._base = NULL
        self._spans = NULL
        self._base_width = 0

    def __dealloc__(self):
        free(self._base)
        free(self._spans)

    def __init__(self, double now, everything, dict ends, held=None):
        self.everything = everything
        self.starts = [now, *sorted(ends)]
        if held is None:
            held = 0
            for nodes in ends.values():
                held |= nodes
        self._freed = [everything & ~held]
        self._freed.extend(map(ends.__getitem__, itertools.islice(self.starts, 1, None)))
        self._views = {}
        self._reservations = []
        self._taken_now = 0

    cdef void _read_base(self) except *:
        """The base segments' freed nodes into C words, with the words each one spans."""
        cdef list freed = self._freed
        cdef Py_ssize_t count = len(freed), index, width = 1, first, last
        cdef Py_ssize_t bits
        for nodes in freed:
            bits = nodes.bit_length()
            if (bits + 63) // 64 > width:
                width = (bits + 63) // 64
        self._base = <uint64_t*> malloc(count * width * sizeof(uint64_t))
        self._spans = <Py_ssize_t*> malloc(2 * count * sizeof(Py_ssize_t))
        if self._base is NULL or self._spans is NULL:
            raise MemoryError()
        self._base_width = width
        cdef uint64_t* row
        for index in range(count):
            row = self._base + index * width
            _to_words(freed[index], row, width)
            first = 0
            while first < width and not row[first]:
                first += 1
            last = width - 1
            while last > first and not row[last]:
                last -= 1
            self._spans[2 * index] = first
            self._spans[2 * index + 1] = last

    def free_now(self):
        cdef list starts = self.starts, freed = self._freed
        now = starts[0]
        before = 0
        last = freed[0]
        cdef Py_ssize_t index
        for index in range(1, len(freed)):
            if starts[index] != now:
                break
            before = last
            last |= freed[index]
        return before | (last & ~self._taken_now)

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
        cdef list starts = self.starts
        cdef Py_ssize_t index, word, count = len(starts)
        cdef bint every = usable == self.everything
        taken = [
            (start, end, (nodes & usable) >> low)
            for start, end, nodes in self._reservations
            if nodes & usable
        ]
        # the view's segments: those that free a usable node (each one, when reservations
        # are replayed on them, merged after), their frees accumulated
        cdef bint all_segments = bool(taken) or every
        cdef _View view = _View(width, low, count + 2 * len(taken) if all_segments else 8)
        width = view.width
        if self._base is NULL:
            self._read_base()
        cdef Py_ssize_t base_width = self._base_width
        # the words of the table the view's nodes are in
        cdef Py_ssize_t first_word = low // 64
        cdef Py_ssize_t last_word = (usable.bit_length() - 1) // 64 if usable else 0
        cdef uint64_t* mine = <uint64_t*> malloc(2 * width * sizeof(uint64_t))
        if mine is NULL:
            raise MemoryError()
        cdef uint64_t* part = mine + width  # one segment's usable nodes, shifted
        cdef bint touches
        try:
            _to_words(usable >> low, mine, width)
            memset(view.scratch, 0, width * sizeof(uint64_t))  # the accumulated frees
            for index in range(count):
                if index and not all_segments and (
                    self._spans[2 * index + 1] < first_word
                    or self._spans[2 * index] > last_word
                ):
                    continue  # frees no node in the view's words
                _extract(self._base + index * base_width, base_width, low, part, width)
                touches = False
                for word in range(width):
                    part[word] &= mine[word]
                    if part[word]:
                        touches = True
                if index and not all_segments and not touches:
                    continue
                for word in range(width):
                    view.scratch[word] |= part[word]
                view._append_words(starts[index], view.scratch)
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
        if start == self.starts[0] and end > start:
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
