import type { RoutingStrategy } from '@igw/contracts';
import type { DeploymentView } from './deployment-store';

/** One deployment of a tier, as a strategy orders it. */
export interface Ranked {
  deployment: string;
  weight: number;
}

/** Share of the requests `lowest-latency` sends in a random order, so a deployment that got faster is noticed. */
export const LATENCY_EXPLORATION = 0.1;

/**
 * Orders a tier's deployments for one request: the first is the one to try, the others the
 * order to retry in. State of its own (the weighted round robin's) is per tier and per process:
 * each replica then shares its own traffic exactly by weight, and so do they all together.
 */
export class TierOrder {
  /** Smooth weighted round robin (nginx's): each turn every deployment gains its weight, the richest is picked and pays the total. */
  private readonly credit = new Map<string, number>();

  constructor(
    private readonly strategy: RoutingStrategy,
    private readonly random: () => number = Math.random,
  ) {}

  order<T extends Ranked>(members: readonly T[], views: ReadonlyMap<string, DeploymentView>): T[] {
    if (members.length <= 1) return [...members];
    switch (this.strategy) {
      case 'ordered':
        return [...members];
      case 'least-busy':
        return this.rotated(members).sort((a, b) => (views.get(a.deployment)?.inFlight ?? 0) - (views.get(b.deployment)?.inFlight ?? 0));
      case 'lowest-latency': {
        if (this.random() < LATENCY_EXPLORATION) return this.shuffled(members);
        // A deployment never measured goes first: it is how it gets measured.
        const latency = (member: T) => views.get(member.deployment)?.latencyMs ?? -1;
        return this.rotated(members).sort((a, b) => latency(a) - latency(b));
      }
      case 'weighted':
        return this.weighted(members);
    }
  }

  private weighted<T extends Ranked>(members: readonly T[]): T[] {
    let total = 0;
    let best: T | undefined;
    let bestCredit = -Infinity;
    for (const member of members) {
      const credit = (this.credit.get(member.deployment) ?? 0) + member.weight;
      this.credit.set(member.deployment, credit);
      total += member.weight;
      if (credit > bestCredit) {
        bestCredit = credit;
        best = member;
      }
    }
    const first = best as T;
    this.credit.set(first.deployment, bestCredit - total);
    const rest = members.filter((member) => member !== first).sort((a, b) => b.weight - a.weight);
    return [first, ...rest];
  }

  /** Equal members take turns being first. */
  private rotated<T>(members: readonly T[]): T[] {
    const start = Math.floor(this.random() * members.length);
    return [...members.slice(start), ...members.slice(0, start)];
  }

  private shuffled<T>(members: readonly T[]): T[] {
    const copy = [...members];
    for (let index = copy.length - 1; index > 0; index--) {
      const other = Math.floor(this.random() * (index + 1));
      [copy[index], copy[other]] = [copy[other], copy[index]];
    }
    return copy;
  }
}
