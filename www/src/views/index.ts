// The view registry: one entry per tab, in tab order.
import type { View, ViewName } from '../app-types';
import { renderOverview } from './overview';
import { renderTimeline } from './timeline';
import { renderTree } from './tree';
import { renderState } from './state';
import { renderQueries } from './queries';
import { renderCompare } from './compare';
import { renderPeak } from './peak';
import { renderCategories } from './categories';
import { renderSteps } from './steps';
import { renderLeaks } from './leaks';
import { renderOom } from './oom';
import { renderAllocations } from './allocations';
import { renderWhatIf } from './whatif';

export const VIEWS: Record<ViewName, View> = {
  overview: { title: 'Overview', render: renderOverview },
  timeline: { title: 'Timeline', render: renderTimeline },
  allocations: { title: 'Allocations', render: renderAllocations },
  peak: { title: 'Peak', render: renderPeak },
  categories: { title: 'Categories', render: renderCategories },
  steps: { title: 'Steps', render: renderSteps },
  tree: { title: 'Memory tree', render: renderTree },
  state: { title: 'Allocator state', render: renderState },
  leaks: { title: 'Leaks', render: renderLeaks },
  oom: { title: 'OOM', render: renderOom },
  whatif: { title: 'What if', render: renderWhatIf },
  queries: { title: 'Queries', render: renderQueries },
  compare: { title: 'Compare', render: renderCompare },
};

/**
 * Whether `name` (from the URL hash or the embedding API) is a view: an own key only, since
 * `constructor`, `__proto__` or `toString` are found `in` any object and are no view.
 */
export function isView(name: unknown): name is ViewName {
  return typeof name === 'string' && Object.hasOwn(VIEWS, name);
}
