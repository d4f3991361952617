/**
 * Where the message list's elements (messages and notice lines) sit in the page: in order, in
 * groups of about GROUP_SIZE under the list element, and only the groups near the viewport hold
 * their elements. A group far off screen is an empty box of its last measured height; its elements
 * (kept here, and kept up to date by their views) go back in as it nears the viewport. This is how
 * VS Code's own lists stay fast (they render only the rows in view): what the browser restyles and
 * lays out in each frame stays the same whether the conversation has 20 messages or 2,000. With
 * every message in the page, each frame that added older messages spent 100–200 ms restyling and
 * laying out all the others on a slow machine, even with `content-visibility: auto` on them.
 *
 * Elements are never moved from one group to another to even them out (a move would lose focus):
 * new elements join the group of their neighbour, or a new group when that one is full at the edge
 * they are added to. A group that holds the focus or the selection stays in the page.
 */
import { h } from '../shared/dom';

/** Elements per group when messages are added at either end. */
export const GROUP_SIZE = 20;
/** Groups within this many viewport heights above or below the viewport hold their elements. */
const KEEP_VIEWPORTS = 1;

interface Group {
  readonly el: HTMLElement;
  /** The group's elements in order, whether or not they are in the page. */
  items: HTMLElement[];
  /** Whether `items` are in the page (else `el` is an empty box of their last height). */
  attached: boolean;
}

export class MessageGroups {
  private groups: Group[] = [];
  private readonly groupOf = new Map<Element, Group>();
  private readonly byEl = new WeakMap<Element, Group>();
  private readonly observer: IntersectionObserver;

  constructor(
    /** The list element; its children are the groups. */
    private readonly log: HTMLElement,
    /** The scroll container that holds the list. */
    scroller: HTMLElement,
  ) {
    // The callback runs after a frame's layout: the sizes it reads are already computed.
    this.observer = new IntersectionObserver((entries) => this.onIntersection(entries), {
      root: scroller,
      rootMargin: `${KEEP_VIEWPORTS * 100}% 0px`,
    });
  }

  /** How many elements the list holds, in the page or not. */
  get size(): number {
    return this.groupOf.size;
  }

  /** The first element of the list. */
  first(): HTMLElement | undefined {
    return this.groups[0]?.items[0];
  }

  /** The first element of the list that is in the page (groups above it are boxes of their height). */
  firstInPage(): HTMLElement | undefined {
    return this.groups.find((group) => group.attached)?.items[0];
  }

  /** The element after `el` in the list. */
  next(el: Element): HTMLElement | undefined {
    const group = this.groupOf.get(el);
    if (!group) return undefined;
    const at = group.items.indexOf(el as HTMLElement);
    return group.items[at + 1] ?? this.groups[this.groups.indexOf(group) + 1]?.items[0];
  }

  /**
   * Puts `el` right after `previous` (at the start of the list when undefined), taking it from
   * where it was. It joins the group of `previous` (of the first element at the start), or a new
   * group when that one is full and `el` would be its last (first) element.
   */
  insertAfter(previous: Element | undefined, el: HTMLElement): void {
    this.take(el);
    const group = previous ? this.groupOf.get(previous) : this.groups[0];
    if (!group) {
      this.addGroup(0, [el]);
      return;
    }
    const at = previous ? group.items.indexOf(previous as HTMLElement) + 1 : 0;
    const atEdge = previous ? at === group.items.length : true;
    if (atEdge && group.items.length >= GROUP_SIZE) {
      this.addGroup(this.groups.indexOf(group) + (previous ? 1 : 0), [el]);
      return;
    }
    // A group that changes is put back in the page: what changed is about to be shown or measured.
    this.attach(group);
    const before = group.items[at];
    group.items.splice(at, 0, el);
    this.groupOf.set(el, group);
    if (before) before.before(el);
    else group.el.append(el);
  }

  /**
   * Puts `elements` (in list order, none of them in the list) before the first element: the first
   * group is filled up to GROUP_SIZE, the rest go into new groups.
   */
  prepend(elements: readonly HTMLElement[]): void {
    let rest = elements.length;
    const first = this.groups[0];
    if (rest > 0 && first && first.items.length < GROUP_SIZE) {
      const take = elements.slice(Math.max(0, rest - (GROUP_SIZE - first.items.length)), rest);
      this.attach(first);
      first.items.unshift(...take);
      for (const el of take) this.groupOf.set(el, first);
      first.el.prepend(...take);
      rest -= take.length;
    }
    for (let end = rest; end > 0; end -= GROUP_SIZE)
      this.addGroup(0, elements.slice(Math.max(0, end - GROUP_SIZE), end));
  }

  /** Takes every element not in `keep` out of the list (groups left empty go too). */
  keepOnly(keep: ReadonlySet<Element>): void {
    for (const el of Array.from(this.groupOf.keys())) if (!keep.has(el)) this.take(el);
  }

  /** Takes `el` out of its group, if it is in one. */
  private take(el: Element): void {
    const group = this.groupOf.get(el);
    if (!group) return;
    group.items.splice(group.items.indexOf(el as HTMLElement), 1);
    this.groupOf.delete(el);
    el.remove();
    if (group.items.length === 0) {
      this.observer.unobserve(group.el);
      group.el.remove();
      this.groups.splice(this.groups.indexOf(group), 1);
    }
  }

  private addGroup(index: number, items: HTMLElement[]): void {
    const group: Group = { el: h('div', { className: 'msg-group' }, ...items), items, attached: true };
    for (const el of items) this.groupOf.set(el, group);
    this.byEl.set(group.el, group);
    const next = this.groups[index];
    if (next) next.el.before(group.el);
    else this.log.append(group.el);
    this.groups.splice(index, 0, group);
    this.observer.observe(group.el);
  }

  /**
   * Puts a group's elements back in the page. `recheck`: the group changed, not its place; observing
   * it again has the observer report where it is (it reports only changes of that otherwise), so a
   * group far off screen leaves the page again.
   */
  private attach(group: Group, recheck = true): void {
    if (group.attached) return;
    group.attached = true;
    group.el.style.height = '';
    group.el.append(...group.items);
    if (recheck) {
      this.observer.unobserve(group.el);
      this.observer.observe(group.el);
    }
  }

  private detach(group: Group, height: number): void {
    if (!group.attached || group.el.contains(document.activeElement)) return;
    const selection = document.getSelection();
    if (selection && selection.rangeCount > 0 && selection.containsNode(group.el, true)) return;
    group.attached = false;
    // Set through the CSSOM (the webview's CSP forbids style attributes, not this).
    group.el.style.height = `${height}px`;
    group.el.replaceChildren();
  }

  private onIntersection(entries: readonly IntersectionObserverEntry[]): void {
    for (const entry of entries) {
      const group = this.byEl.get(entry.target);
      if (!group || !group.el.isConnected) continue;
      if (entry.isIntersecting) this.attach(group, false);
      // A hidden view reports nothing in view and no sizes: keep everything as it is then.
      else if (entry.rootBounds && entry.rootBounds.height > 0 && entry.boundingClientRect.height > 0)
        this.detach(group, entry.boundingClientRect.height);
    }
  }
}
