// What other projects (apps/standalone) use of decisions, reached as @igw/decisions-app.
export { startDecisions } from './decisions.app';
export { DecisionsModule } from './decisions.module';
