import { createMemoryStore } from '../../src/store/memory.ts';
import { storeCases } from './store.case.ts';

storeCases('memory', async () => createMemoryStore());
