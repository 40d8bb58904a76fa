/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Buddy allocator over one region; no locking (the arena locks around it). */
#ifndef SECARENA_BUDDY_H
#define SECARENA_BUDDY_H

#include <stddef.h>
#include <stdint.h>

#define BUDDY_MIN_ORDER_LOWEST	4	/* 16 bytes: room for the two free-list links */
#define BUDDY_ORDERS		64
/*
 * The region is cut into BUDDY_SLICES equal slices (fewer if a slice would
 * be smaller than a granule), and the free lists are kept per slice, so
 * that an allocation can ask for a block in a given slice: threads that
 * each take their blocks from a slice of their own write no common cache
 * line of data or of the block map on their malloc/free. The caller that
 * finds its slice full asks again for any slice, so the slices never
 * change what fits.
 */
#define BUDDY_SLICES_LOG	3
#define BUDDY_SLICES		(1u << BUDDY_SLICES_LOG)
#define BUDDY_ANY_SLICE		(-1)	/* no preference: the smallest fitting block */

/* Block map entry: 0 = no block starts at this granule, else (state << 6) | order. */
enum block_state {
	BLOCK_FREE = 0,		/* on a free list of the buddy */
	BLOCK_USED = 1,		/* held by a caller */
	BLOCK_CACHED = 2,	/* held by a thread cache (zeroed, ready to hand out), or being freed */
	BLOCK_RETIRED = 3,	/* freed in a fork child whose arena is not its own */
};
#define MAP_ENTRY(state, order)	((unsigned char)(((state) << 6) | (order)))
#define MAP_STATE(e)		((unsigned)(e) >> 6)
#define MAP_ORDER(e)		((unsigned)(e) & 63u)

struct buddy {
	/* Set once; every free() reads them, without the lock. */
	unsigned char *base;		/* the data area */
	size_t size;			/* 1 << max_order */
	unsigned int min_order, max_order;
	unsigned char *block_map;	/* size >> min_order entries, out of band */
	uint64_t link_key;		/* free-list links are stored XORed with it */
	unsigned int slice_order;	/* a slice is 1 << slice_order bytes */
	unsigned int nslices;		/* 1 << (max_order - slice_order) */
	/*
	 * Under the lock, on lines of their own (no false sharing with the
	 * above). A free block is on the list of its order and of the slice
	 * it starts in.
	 */
	uint64_t nonempty[BUDDY_SLICES] __attribute__((aligned(64))); /* bit k: order k */
	size_t free_head[BUDDY_ORDERS][BUDDY_SLICES]; /* offset + 1 of the first; 0: empty */
	size_t bytes_out;		/* bytes in blocks that are not free */
};

static inline size_t buddy_map_entries(size_t size, unsigned int min_order)
{
	return size >> min_order;
}

void buddy_init(struct buddy *b, void *base, size_t size, unsigned int min_order,
		unsigned char *block_map, uint64_t link_key);
/*
 * A zero-filled block of 1 << order bytes marked BLOCK_USED, or NULL. With
 * a slice (0 .. BUDDY_SLICES - 1, taken modulo the region's slices), from
 * that slice only; with BUDDY_ANY_SLICE, the smallest free block that fits,
 * from any slice.
 */
void *buddy_alloc(struct buddy *b, unsigned int order, int slice);
/* Give back a block whose bytes are all zero; merges with free buddies. */
void buddy_free(struct buddy *b, void *p, unsigned int order);

static inline size_t buddy_granule(const struct buddy *b, const void *p)
{
	return (size_t)((const unsigned char *)p - b->base) >> b->min_order;
}

/* Entries change under the arena lock or, for a held block, by its holder. */
static inline unsigned char buddy_entry(const struct buddy *b, size_t granule)
{
	return __atomic_load_n(&b->block_map[granule], __ATOMIC_RELAXED);
}

static inline void buddy_set_entry(struct buddy *b, size_t granule, unsigned char e)
{
	__atomic_store_n(&b->block_map[granule], e, __ATOMIC_RELAXED);
}

/*
 * Move a held block's entry from expect to e, atomically: of two threads that
 * both saw it held, one wins. 0 (and *expect updated) if it was not expect.
 */
static inline int buddy_claim_entry(struct buddy *b, size_t granule, unsigned char *expect,
				    unsigned char e)
{
	return __atomic_compare_exchange_n(&b->block_map[granule], expect, e, 0,
					   __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

__attribute__((noreturn, cold))
void buddy_bad_pointer(const struct buddy *b, const void *p, const char *what);

/*
 * The entry of the block that starts at p, after checking that p is a
 * granule boundary inside the region and that a block starts there;
 * aborts otherwise. "what" names the caller in the message.
 */
static inline unsigned char buddy_entry_of(const struct buddy *b, const void *p, const char *what)
{
	size_t off = (size_t)((const unsigned char *)p - b->base);
	unsigned char e;

	if (__builtin_expect(off >= b->size, 0))
		buddy_bad_pointer(b, p, what);
	e = buddy_entry(b, off >> b->min_order);
	/* No order is below min_order: this also rejects p off a granule boundary. */
	if (__builtin_expect(e == 0 || (off & (((size_t)1 << MAP_ORDER(e)) - 1)), 0))
		buddy_bad_pointer(b, p, what);
	return e;
}

/* Walk every free list and the whole map; aborts on any inconsistency. Tests. */
void buddy_check(const struct buddy *b);

/* Call fn for every block in the given state. */
void buddy_for_each(const struct buddy *b, enum block_state state,
		    void (*fn)(void *block, size_t size, void *arg), void *arg);

#endif
