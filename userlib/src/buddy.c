// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Buddy allocator over one region.
 *
 * The region is 2^max_order bytes; blocks are 2^k bytes for min_order <= k <=
 * max_order and start at a multiple of their own size, so a block's buddy is
 * at offset ^ 2^k. Instead of bit tables per level, the state lives in one
 * block map out of band: one byte per granule (2^min_order bytes), non-zero
 * only where a block starts, holding the block's order and state (free, used,
 * in a thread cache, retired). That costs size/16 bytes at 16-byte granules
 * (bit tables cost about half that) and buys three things: free() finds a
 * block's order in one load, a pointer into the middle of a block or to a
 * block that is not held is told apart from a valid one by the same load,
 * and a thread cache can move a block it holds between "cached" and "used"
 * with a plain byte store, no lock and no atomic read-modify-write.
 *
 * Free blocks of each order are on doubly linked lists, one per slice of
 * the region (see buddy.h; a block is on its start's slice's list),
 * threaded through
 * their first 16 bytes (offsets + 1, XORed with a per-arena random key). A
 * free block holds nothing else, and every other byte of it is zero: freed
 * blocks are wiped by the caller before they come here, links are zeroed
 * when a block leaves a list, so every block handed out reads as zero. The
 * links are inside the data area, where an overrun of a neighbouring block
 * can reach them, so no link is followed before it is checked against the
 * map (in range, aligned to its order, and marked free of that order) and
 * against its neighbour's link back; a bad link aborts.
 */
#include <stdint.h>

#include "buddy.h"
#include "misuse.h"

struct free_links {
	uint64_t next;
	uint64_t prev;
};

static inline struct free_links *links_at(const struct buddy *b, size_t off)
{
	return (struct free_links *)(void *)(b->base + off);
}

static inline uint64_t link_encode(const struct buddy *b, size_t off_plus_1)
{
	return (uint64_t)off_plus_1 ^ b->link_key;
}

static inline unsigned int slice_of(const struct buddy *b, size_t off)
{
	return (unsigned int)(off >> b->slice_order);
}

/*
 * Offset + 1 of the block a stored link names (0: none), checked before use:
 * a free block of the list's order, starting in the list's slice.
 */
static size_t link_decode(const struct buddy *b, uint64_t stored, unsigned int order,
			  unsigned int slice, const char *which)
{
	size_t x = (size_t)(stored ^ b->link_key);
	size_t off;

	if (x == 0)
		return 0;
	off = x - 1;
	if (off >= b->size || (off & (((size_t)1 << order) - 1)) != 0 ||
	    slice_of(b, off) != slice ||
	    buddy_entry(b, off >> b->min_order) != MAP_ENTRY(BLOCK_FREE, order))
		misuse_abort("free list of order %u corrupted at %p: %s link names no free block "
			     "(heap overrun into a freed block?)", order, (void *)b->base, which);
	return x;
}

void buddy_init(struct buddy *b, void *base, size_t size, unsigned int min_order,
		unsigned char *block_map, uint64_t link_key)
{
	unsigned int k, i;

	b->base = base;
	b->size = size;
	b->min_order = min_order;
	b->max_order = (unsigned int)__builtin_ctzll(size);
	b->block_map = block_map;
	b->link_key = link_key;
	b->slice_order = b->max_order >= min_order + BUDDY_SLICES_LOG ?
			 b->max_order - BUDDY_SLICES_LOG : min_order;
	b->nslices = 1u << (b->max_order - b->slice_order);
	b->bytes_out = 0;
	for (i = 0; i < BUDDY_SLICES; i++) {
		b->nonempty[i] = 0;
		for (k = 0; k < BUDDY_ORDERS; k++)
			b->free_head[k][i] = 0;
	}
	/* One free block: the whole region (the map is zero-filled by its mmap). */
	buddy_set_entry(b, 0, MAP_ENTRY(BLOCK_FREE, b->max_order));
	links_at(b, 0)->next = link_encode(b, 0);
	links_at(b, 0)->prev = link_encode(b, 0);
	b->free_head[b->max_order][0] = 1;
	b->nonempty[0] = (uint64_t)1 << b->max_order;
}

static void list_push(struct buddy *b, size_t off, unsigned int order)
{
	unsigned int s = slice_of(b, off);
	size_t head = b->free_head[order][s];
	struct free_links *l = links_at(b, off);

	l->next = link_encode(b, head);
	l->prev = link_encode(b, 0);
	if (head)
		links_at(b, head - 1)->prev = link_encode(b, off + 1);
	b->free_head[order][s] = off + 1;
	b->nonempty[s] |= (uint64_t)1 << order;
}

/* Take block off out of the free list of its order, checking both neighbours. */
static void list_unlink(struct buddy *b, size_t off, unsigned int order)
{
	unsigned int s = slice_of(b, off);
	struct free_links *l = links_at(b, off);
	size_t next = link_decode(b, l->next, order, s, "next");
	size_t prev = link_decode(b, l->prev, order, s, "prev");

	if (prev) {
		if (link_decode(b, links_at(b, prev - 1)->next, order, s, "next") != off + 1)
			misuse_abort("free list of order %u corrupted at %p: links disagree",
				     order, (void *)b->base);
		links_at(b, prev - 1)->next = link_encode(b, next);
	} else {
		if (b->free_head[order][s] != off + 1)
			misuse_abort("free list of order %u corrupted at %p: head disagrees",
				     order, (void *)b->base);
		b->free_head[order][s] = next;
		if (!next)
			b->nonempty[s] &= ~((uint64_t)1 << order);
	}
	if (next) {
		if (link_decode(b, links_at(b, next - 1)->prev, order, s, "prev") != off + 1)
			misuse_abort("free list of order %u corrupted at %p: links disagree",
				     order, (void *)b->base);
		links_at(b, next - 1)->prev = link_encode(b, prev);
	}
	l->next = 0;
	l->prev = 0;
}

/*
 * The start slice of the block of order k that would hold slice s: itself
 * up to a slice's size, above that the first slice of the aligned group.
 */
static inline unsigned int holder_slice(const struct buddy *b, unsigned int k, unsigned int s)
{
	return k <= b->slice_order ? s : s & ~((1u << (k - b->slice_order)) - 1);
}

/* Bit k set: a free block of order k holds (part of) slice s. */
static uint64_t orders_holding(const struct buddy *b, unsigned int s)
{
	uint64_t m = b->nonempty[s] & (((uint64_t)2 << b->slice_order) - 1);
	unsigned int k;

	for (k = b->slice_order + 1; k <= b->max_order; k++)
		m |= b->nonempty[holder_slice(b, k, s)] & ((uint64_t)1 << k);
	return m;
}

void *buddy_alloc(struct buddy *b, unsigned int order, int slice)
{
	uint64_t candidates = 0;
	unsigned int k, s = 0;
	size_t off, target;

	if (order < b->min_order || order > b->max_order)
		return NULL;
	if (slice != BUDDY_ANY_SLICE) {
		unsigned int want = (unsigned int)slice & (b->nslices - 1);

		candidates = orders_holding(b, want) >> order;
		if (!candidates)
			return NULL;
		k = order + (unsigned int)__builtin_ctzll(candidates);
		s = holder_slice(b, k, want);
		target = (size_t)want << b->slice_order;
	} else {
		/*
		 * Anywhere: the smallest order first, then the highest slice
		 * that has one. Which slice matters only near full: in the
		 * differential test's model run on 25 seeds (arenas 94% full
		 * at the peak), taking the highest failed as often as one
		 * list per order did (1 seed), the lowest twice as often.
		 */
		for (s = 0; s < b->nslices; s++)
			candidates |= b->nonempty[s];
		candidates >>= order;
		if (!candidates)
			return NULL;
		k = order + (unsigned int)__builtin_ctzll(candidates);
		for (s = b->nslices - 1; !((b->nonempty[s] >> k) & 1); s--)
			;
		target = (size_t)s << b->slice_order;
	}
	off = link_decode(b, link_encode(b, b->free_head[k][s]), k, s, "head") - 1;
	list_unlink(b, off, k);
	/*
	 * Split down towards target: the half that holds it is kept (the
	 * lower one once both halves are in the target's slice), the other
	 * goes on the free lists.
	 */
	while (k > order) {
		size_t half;

		k--;
		half = (size_t)1 << k;
		if (k >= b->slice_order && (target & half)) {
			buddy_set_entry(b, off >> b->min_order, MAP_ENTRY(BLOCK_FREE, k));
			list_push(b, off, k);
			off += half;
		} else {
			buddy_set_entry(b, (off + half) >> b->min_order, MAP_ENTRY(BLOCK_FREE, k));
			list_push(b, off + half, k);
		}
	}
	buddy_set_entry(b, off >> b->min_order, MAP_ENTRY(BLOCK_USED, order));
	b->bytes_out += (size_t)1 << order;
	return b->base + off;
}

void buddy_free(struct buddy *b, void *p, unsigned int order)
{
	size_t off = (size_t)((unsigned char *)p - b->base);

	b->bytes_out -= (size_t)1 << order;
	while (order < b->max_order) {
		size_t buddy = off ^ ((size_t)1 << order);

		if (buddy_entry(b, buddy >> b->min_order) != MAP_ENTRY(BLOCK_FREE, order))
			break;
		list_unlink(b, buddy, order);
		/* Neither half starts a block of its own any more. */
		buddy_set_entry(b, buddy >> b->min_order, 0);
		buddy_set_entry(b, off >> b->min_order, 0);
		off &= ~((size_t)1 << order);
		order++;
	}
	buddy_set_entry(b, off >> b->min_order, MAP_ENTRY(BLOCK_FREE, order));
	list_push(b, off, order);
}

void buddy_bad_pointer(const struct buddy *b, const void *p, const char *what)
{
	size_t off = (size_t)((const unsigned char *)p - b->base);
	unsigned char e;

	if (off >= b->size)
		misuse_abort("%s(%p): pointer outside the arena", what, p);
	e = off & (((size_t)1 << b->min_order) - 1) ? 0 : buddy_entry(b, off >> b->min_order);
	if (e == 0)
		misuse_abort("%s(%p): not the start of a block (inside one)", what, p);
	misuse_abort("block map corrupted at %p", p);
}

void buddy_check(const struct buddy *b)
{
	size_t granules = buddy_map_entries(b->size, b->min_order);
	size_t counted[BUDDY_ORDERS] = { 0 };
	size_t g = 0, out = 0;
	unsigned int k;

	/* The starts tile the region exactly. */
	while (g < granules) {
		unsigned char e = buddy_entry(b, g);
		size_t span;

		if (e == 0 || MAP_ORDER(e) < b->min_order || MAP_ORDER(e) > b->max_order)
			misuse_abort("check: bad map entry %#x at granule %zu", e, g);
		span = (size_t)1 << (MAP_ORDER(e) - b->min_order);
		if (g & (span - 1))
			misuse_abort("check: misaligned block at granule %zu", g);
		for (size_t i = 1; i < span; i++)
			if (buddy_entry(b, g + i))
				misuse_abort("check: block start inside a block at %zu", g + i);
		if (MAP_STATE(e) == BLOCK_FREE)
			counted[MAP_ORDER(e)]++;
		else
			out += (size_t)1 << MAP_ORDER(e);
		g += span;
	}
	if (out != b->bytes_out)
		misuse_abort("check: bytes_out %zu, map says %zu", b->bytes_out, out);
	for (k = 0; k < BUDDY_ORDERS; k++) {
		size_t n = 0;
		unsigned int s;

		for (s = 0; s < BUDDY_SLICES; s++) {
			size_t x = b->free_head[k][s], prev = 0;

			if (((b->nonempty[s] >> k) & 1) != (x != 0))
				misuse_abort("check: nonempty mask wrong for order %u", k);
			if (x && s >= b->nslices)
				misuse_abort("check: list of order %u in slice %u past the region",
					     k, s);
			while (x) {
				const struct free_links *l;

				x = link_decode(b, link_encode(b, x), k, s, "head");
				l = links_at(b, x - 1);
				if (link_decode(b, l->prev, k, s, "prev") != prev)
					misuse_abort("check: prev link wrong in order %u", k);
				/* A free block is zero past its links. */
				for (size_t i = sizeof(*l); i < ((size_t)1 << k); i++)
					if (b->base[x - 1 + i])
						misuse_abort("check: free block %p not wiped",
							     (void *)(b->base + x - 1));
				prev = x;
				x = link_decode(b, l->next, k, s, "next");
				if (++n > counted[k])
					misuse_abort("check: list of order %u longer than the map",
						     k);
			}
		}
		if (n != counted[k])
			misuse_abort("check: list of order %u has %zu, map %zu", k, n, counted[k]);
	}
}

void buddy_for_each(const struct buddy *b, enum block_state state,
		    void (*fn)(void *block, size_t size, void *arg), void *arg)
{
	size_t granules = buddy_map_entries(b->size, b->min_order);
	size_t g = 0;

	while (g < granules) {
		unsigned char e = buddy_entry(b, g);

		if (e == 0)
			misuse_abort("block map corrupted at granule %zu", g);
		if (MAP_STATE(e) == state)
			fn(b->base + (g << b->min_order), (size_t)1 << MAP_ORDER(e), arg);
		g += (size_t)1 << (MAP_ORDER(e) - b->min_order);
	}
}
