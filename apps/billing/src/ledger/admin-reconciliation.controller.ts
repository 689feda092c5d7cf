import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireAdminToken } from '@igw/http';
import { DataSource } from 'typeorm';
import { ReconciliationReportDto } from './dto/reconciliation.dto';
import { reconcileBalances } from './reconciliation';

@ApiTags('admin')
@RequireAdminToken()
@Controller('admin/v1/reconciliation')
export class AdminReconciliationController {
  constructor(private readonly dataSource: DataSource) {}

  @Get()
  @ApiOperation({
    summary: 'Check every balance against the ledger',
    description: 'Compares each account balance with the sum of its ledger entries. Mismatches are part of the report (200), not an error. Also: npm run reconcile.',
  })
  @ApiOkResponse({ type: ReconciliationReportDto })
  reconcile(): Promise<ReconciliationReportDto> {
    return reconcileBalances(this.dataSource);
  }
}
