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


cdef struct _Held:
    double end  # a job's end, rounded
    Py_ssize_t index  # its place in the order given


cdef int _later_first(const void* a, const void* b) noexcept nogil:
    cdef double x = (<const _Held*> a).end, y = (<const _Held*> b).end
    return -1 if x > y else (1 if x < y else 0)


cdef inline bint _any(const uint64_t* words, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        if words[i]:
            return True
    return False


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
    # what free_now gives before any reservation: the nodes free in the segments before
    # the last that starts now, and in that one (see free_now)
    cdef object _now_before
    cdef object _now_last

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
        self._now_parts()

    cdef void _now_parts(self) except *:
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
        self._now_before = before
        self._now_last = last

    @staticmethod
    def of_held(double now, resolution, held, Py_ssize_t node_count):
        """See the reference's ``of_held``: the same plan, the base's segments made in C
        words from the jobs' bitmaps (no int per end)."""
        cdef double step = resolution, when_at, end
        cdef Py_ssize_t width = (node_count + 63) // 64 if node_count > 0 else 1
        cdef Py_ssize_t count = 0, capacity = 64, index, word, slot, low, high
        cdef list masks = []
        cdef _Held* order = <_Held*> malloc(capacity * sizeof(_Held))
        cdef _Held* grown
        cdef uint64_t* rows = NULL
        cdef uint64_t* claimed = NULL
        cdef uint64_t* infinite = NULL
        cdef uint64_t* row
        cdef uint64_t* nodes
        cdef uint64_t taken
        cdef double* row_ends = NULL
        cdef double current
        cdef Py_ssize_t made = 0
        cdef bint open_row, some = False  # (some: the row's jobs hold nodes)
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
            # Rows of words: one per end (latest first, filled from the last slot down),
            # slot 0 left for the nodes free from now on; then the nodes claimed so far,
            # those of jobs without an end, and one job's nodes.
            rows = <uint64_t*> malloc((count + 1) * width * sizeof(uint64_t))
            row_ends = <double*> malloc((count + 1) * sizeof(double))
            claimed = <uint64_t*> calloc(3 * width, sizeof(uint64_t))
            if rows is NULL or row_ends is NULL or claimed is NULL:
                raise MemoryError()
            infinite = claimed + width
            nodes = claimed + 2 * width
            slot = count  # the slot of the row being filled
            open_row = False
            current = 0
            for index in range(count):
                end = order[index].end
                if not open_row or end != current:
                    if open_row and current != _INF:
                        # (an end whose jobs hold no node at all stays, as the reference
                        # keeps it; one whose nodes later ends took goes)
                        if not some or _any(rows + slot * width, width):
                            row_ends[slot] = current
                            slot -= 1
                            made += 1
                    current = end
                    open_row = True
                    some = False
                    row = infinite if end == _INF else rows + slot * width
                    if end != _INF:
                        memset(row, 0, width * sizeof(uint64_t))
                plurm_long_or_words(masks[order[index].index], nodes, width, &low, &high)
                if low <= high:
                    some = True
                for word in range(low, high + 1):
                    taken = nodes[word] & ~claimed[word]
                    nodes[word] = 0
                    row[word] |= taken
                    claimed[word] |= taken
            if open_row and current != _INF and (not some or _any(rows + slot * width, width)):
                row_ends[slot] = current
                slot -= 1
                made += 1
            # the rows made are in slots slot + 1 .. count, earliest end first: slot 0 gets
            # the nodes free from now on, the others follow it
            if made and slot + 1 != 1:
                memmove(rows + width, rows + (slot + 1) * width, made * width * sizeof(uint64_t))
                memmove(row_ends + 1, row_ends + slot + 1, made * sizeof(double))
            # slot 0: every node of the table but those held for ever, then less those held
            for word in range(width):
                rows[word] = ~infinite[word]
            if node_count % 64:
                rows[width - 1] &= ((<uint64_t> 1) << (node_count % 64)) - 1
            if node_count <= 0:
                rows[0] = 0
            profile.everything = _from_words(rows, width)
            for word in range(width):
                rows[word] &= ~claimed[word]
            profile.starts = [now]
            for index in range(1, made + 1):
                profile.starts.append(row_ends[index])
            profile._base = rows
            rows = NULL
            profile._base_width = width
            profile._spans = <Py_ssize_t*> malloc(2 * (made + 1) * sizeof(Py_ssize_t))
            if profile._spans is NULL:
                raise MemoryError()
            for index in range(made + 1):
                row = profile._base + index * width
                slot = 0
                while slot < width and not row[slot]:
                    slot += 1
                word = width - 1
                while word > slot and not row[word]:
                    word -= 1
                profile._spans[2 * index] = slot
                profile._spans[2 * index + 1] = word
            held_nodes = _from_words(claimed, width)
            first = _from_words(profile._base, width)
            if made and row_ends[1] == now:
                profile._now_before = first
                profile._now_last = first | _from_words(profile._base + width, width)
            else:
                profile._now_before = 0
                profile._now_last = first
        finally:
            free(order)
            free(rows)
            free(row_ends)
            free(claimed)
        profile._freed = None
        profile._views = {}
        profile._reservations = []
        profile._taken_now = 0
        return profile, held_nodes

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
